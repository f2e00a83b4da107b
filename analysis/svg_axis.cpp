#include "analysis/svg_axis.h"

#include <cmath>

#include <fmt/format.h>

namespace racksim::analysis {

TimeAxis time_axis(double span_s, int target_ticks) {
  TimeAxis axis;
  if (span_s <= 0) span_s = 1;
  if (span_s < 1e-3) {
    axis.unit = "us";
    axis.unit_s = 1e-6;
  } else if (span_s < 1) {
    axis.unit = "ms";
    axis.unit_s = 1e-3;
  } else {
    axis.unit = "s";
    axis.unit_s = 1;
  }
  const double raw = span_s / std::max(target_ticks, 1);
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  axis.step_s = step;
  for (int i = 0; i * step <= span_s * (1 + 1e-9); ++i) axis.ticks_s.push_back(i * step);
  return axis;
}

std::string TimeAxis::label(double t_s) const {
  const double v = t_s / unit_s;
  const double step = step_s / unit_s;
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return fmt::format("{:.{}f}", v, decimals);
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace racksim::analysis
