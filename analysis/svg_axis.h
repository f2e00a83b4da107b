// A time axis for SVG charts: round tick steps (1, 2, 5 x 10^k) in a unit that fits the span.
#pragma once

#include <string>
#include <vector>

namespace racksim::analysis {

struct TimeAxis {
  std::string unit;   // "s", "ms" or "us"
  double unit_s = 1;  // seconds per unit
  double step_s = 0;  // seconds between ticks
  std::vector<double> ticks_s;
  std::string label(double t_s) const;  // "250" (in `unit`)
};

// About `target_ticks` ticks over [0, span_s].
TimeAxis time_axis(double span_s, int target_ticks = 10);

// XML-escapes text for an SVG element or attribute.
std::string xml_escape(const std::string& text);

}  // namespace racksim::analysis
