#include "analysis/log_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "analysis/svg_axis.h"

namespace racksim::analysis {

namespace {

constexpr double kPanelWidth = 460;
constexpr double kPanelHeight = 340;
constexpr double kMarginLeft = 70;
constexpr double kMarginTop = 50;
constexpr double kPlotWidth = 360;
constexpr double kPlotHeight = 240;

struct Range {
  double lo = std::numeric_limits<double>::max();
  double hi = 0;
  void add(double v) {
    if (v > 0 && std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  // Whole decades around the data, so the ticks sit on the edges.
  void round_out() {
    if (hi <= 0) lo = 1, hi = 10;
    lo = std::pow(10, std::floor(std::log10(lo)));
    hi = std::pow(10, std::ceil(std::log10(hi)));
    if (hi <= lo) hi = lo * 10;
  }
  double frac(double v) const {
    return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  }
};

std::string tick_label(double v) {
  return fmt::format("{:g}", v);
}

void write_panel(const ChartPanel& panel, double x0, std::ostream& os) {
  Range xr, yr;
  for (const auto& s : panel.series) {
    for (const auto& [x, y] : s.points) xr.add(x), yr.add(y);
  }
  for (const auto& m : panel.markers) xr.add(m.x);
  xr.round_out();
  yr.round_out();
  const double left = x0 + kMarginLeft;
  const double bottom = kMarginTop + kPlotHeight;
  auto px = [&](double x) { return left + xr.frac(x) * kPlotWidth; };
  auto py = [&](double y) { return bottom - yr.frac(y) * kPlotHeight; };
  os << fmt::format("<text x='{}' y='{}' font-weight='bold'>{}</text>\n", left, kMarginTop - 20,
                    xml_escape(panel.title));
  os << fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='none' stroke='#444'/>\n",
                    left, kMarginTop, kPlotWidth, kPlotHeight);
  for (double t : decade_ticks(xr.lo, xr.hi)) {
    os << fmt::format(
        "<line x1='{0}' y1='{1}' x2='{0}' y2='{2}' stroke='#ddd'/><text x='{0}' y='{3}' "
        "text-anchor='middle'>{4}</text>\n",
        px(t), kMarginTop, bottom, bottom + 16, tick_label(t));
  }
  for (double t : decade_ticks(yr.lo, yr.hi)) {
    os << fmt::format(
        "<line x1='{0}' y1='{1}' x2='{2}' y2='{1}' stroke='#ddd'/><text x='{3}' y='{4}' "
        "text-anchor='end'>{5}</text>\n",
        left, py(t), left + kPlotWidth, left - 4, py(t) + 4, tick_label(t));
  }
  os << fmt::format("<text x='{}' y='{}' text-anchor='middle'>{}</text>\n", left + kPlotWidth / 2,
                    bottom + 34, xml_escape(panel.x_label));
  os << fmt::format(
      "<text transform='translate({},{}) rotate(-90)' text-anchor='middle'>{}</text>\n", x0 + 16,
      kMarginTop + kPlotHeight / 2, xml_escape(panel.y_label));
  for (const auto& m : panel.markers) {
    if (!(m.x > 0)) continue;
    os << fmt::format(
        "<line x1='{0}' y1='{1}' x2='{0}' y2='{2}' stroke='#a0a' stroke-dasharray='2,3'/><text "
        "x='{3}' y='{4}' fill='#a0a'>{5}</text>\n",
        px(m.x), kMarginTop, bottom, px(m.x) + 3, bottom - 6, xml_escape(m.label));
  }
  double legend_y = kMarginTop + 14;
  for (const auto& s : panel.series) {
    std::string path;
    for (const auto& [x, y] : s.points) {
      if (!(x > 0 && y > 0)) continue;
      path += fmt::format("{}{:.1f},{:.1f} ", path.empty() ? "M" : "L", px(x), py(y));
    }
    os << fmt::format("<path d='{}' fill='none' stroke='{}' stroke-width='2'{}/>\n", path, s.color,
                      s.dashed ? " stroke-dasharray='6,4'" : "");
    if (!s.dashed) {
      for (const auto& [x, y] : s.points) {
        if (x > 0 && y > 0)
          os << fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3' fill='{}'/>\n", px(x), py(y),
                            s.color);
      }
    }
    os << fmt::format("<text x='{}' y='{}' fill='{}' text-anchor='end'>{}</text>\n",
                      left + kPlotWidth - 6, legend_y, s.color, xml_escape(s.name));
    legend_y += 14;
  }
}

}  // namespace

std::vector<double> decade_ticks(double lo, double hi) {
  std::vector<double> ticks;
  for (double t = std::pow(10, std::floor(std::log10(lo))); t <= hi * 1.0001; t *= 10)
    ticks.push_back(t);
  return ticks;
}

void write_log_charts(const std::string& title, const std::vector<ChartPanel>& panels,
                      std::ostream& os) {
  const double width = kPanelWidth * static_cast<double>(std::max<size_t>(1, panels.size()));
  os << fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{0}' height='{1}' viewBox='0 0 {0} {1}' "
      "font-family='sans-serif' font-size='11'>\n<rect width='100%' height='100%' fill='white'/>\n",
      width, kPanelHeight + 20);
  os << fmt::format("<text x='10' y='16' font-size='13' font-weight='bold'>{}</text>\n",
                    xml_escape(title));
  for (size_t i = 0; i < panels.size(); ++i) {
    os << "<g>\n";
    write_panel(panels[i], kPanelWidth * static_cast<double>(i), os);
    os << "</g>\n";
  }
  os << "</svg>\n";
}

}  // namespace racksim::analysis
