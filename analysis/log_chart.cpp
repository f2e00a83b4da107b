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

// Where a panel's plot lies on the page, and its data-to-pixel mapping (log axes).
struct PanelFrame {
  Range xr, yr;
  double x0 = 0, left = 0, bottom = 0;
  double px(double x) const { return left + xr.frac(x) * kPlotWidth; }
  double py(double y) const { return bottom - yr.frac(y) * kPlotHeight; }
};

PanelFrame panel_frame(const ChartPanel& panel, double x0) {
  PanelFrame f;
  for (const auto& s : panel.series) {
    for (const auto& [x, y] : s.points) f.xr.add(x), f.yr.add(y);
  }
  for (const auto& m : panel.markers) f.xr.add(m.x);
  f.xr.round_out();
  f.yr.round_out();
  f.x0 = x0;
  f.left = x0 + kMarginLeft;
  f.bottom = kMarginTop + kPlotHeight;
  return f;
}

// The title, the frame, the decade grid with its labels and the axis names.
void write_axes(const ChartPanel& panel, const PanelFrame& f, std::ostream& os) {
  os << fmt::format("<text x='{}' y='{}' font-weight='bold'>{}</text>\n", f.left, kMarginTop - 20,
                    xml_escape(panel.title));
  os << fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='none' stroke='#444'/>\n",
                    f.left, kMarginTop, kPlotWidth, kPlotHeight);
  for (double t : decade_ticks(f.xr.lo, f.xr.hi)) {
    os << fmt::format(
        "<line x1='{0}' y1='{1}' x2='{0}' y2='{2}' stroke='#ddd'/><text x='{0}' y='{3}' "
        "text-anchor='middle'>{4}</text>\n",
        f.px(t), kMarginTop, f.bottom, f.bottom + 16, tick_label(t));
  }
  for (double t : decade_ticks(f.yr.lo, f.yr.hi)) {
    os << fmt::format(
        "<line x1='{0}' y1='{1}' x2='{2}' y2='{1}' stroke='#ddd'/><text x='{3}' y='{4}' "
        "text-anchor='end'>{5}</text>\n",
        f.left, f.py(t), f.left + kPlotWidth, f.left - 4, f.py(t) + 4, tick_label(t));
  }
  os << fmt::format("<text x='{}' y='{}' text-anchor='middle'>{}</text>\n", f.left + kPlotWidth / 2,
                    f.bottom + 34, xml_escape(panel.x_label));
  os << fmt::format(
      "<text transform='translate({},{}) rotate(-90)' text-anchor='middle'>{}</text>\n", f.x0 + 16,
      kMarginTop + kPlotHeight / 2, xml_escape(panel.y_label));
}

// One series: its line (dashed for a model), its points, and its legend entry at `legend_y`.
void write_series(const ChartSeries& s, const PanelFrame& f, double legend_y, std::ostream& os) {
  std::string path;
  for (const auto& [x, y] : s.points) {
    if (!(x > 0 && y > 0)) continue;
    path += fmt::format("{}{:.1f},{:.1f} ", path.empty() ? "M" : "L", f.px(x), f.py(y));
  }
  os << fmt::format("<path d='{}' fill='none' stroke='{}' stroke-width='2'{}/>\n", path, s.color,
                    s.dashed ? " stroke-dasharray='6,4'" : "");
  if (!s.dashed) {
    for (const auto& [x, y] : s.points) {
      if (x > 0 && y > 0)
        os << fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3' fill='{}'/>\n", f.px(x), f.py(y),
                          s.color);
    }
  }
  os << fmt::format("<text x='{}' y='{}' fill='{}' text-anchor='end'>{}</text>\n",
                    f.left + kPlotWidth - 6, legend_y, s.color, xml_escape(s.name));
}

void write_panel(const ChartPanel& panel, double x0, std::ostream& os) {
  const PanelFrame f = panel_frame(panel, x0);
  write_axes(panel, f, os);
  for (const auto& m : panel.markers) {
    if (!(m.x > 0)) continue;
    os << fmt::format(
        "<line x1='{0}' y1='{1}' x2='{0}' y2='{2}' stroke='#a0a' stroke-dasharray='2,3'/><text "
        "x='{3}' y='{4}' fill='#a0a'>{5}</text>\n",
        f.px(m.x), kMarginTop, f.bottom, f.px(m.x) + 3, f.bottom - 6, xml_escape(m.label));
  }
  double legend_y = kMarginTop + 14;
  for (const auto& s : panel.series) {
    write_series(s, f, legend_y, os);
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
