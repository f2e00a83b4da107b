// Line charts on log-log axes, several panels side by side in one SVG (racksim infer: latency
// and cost per token against batch; racksim racks: step times against domain size).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace racksim::analysis {

struct ChartSeries {
  std::string name;
  std::string color;    // SVG colour
  bool dashed = false;  // floors and bounds are dashed, measurements solid with dots
  std::vector<std::pair<double, double>> points;  // (x, y), both > 0
};

struct ChartMarker {
  double x = 0;  // a vertical line at x
  std::string label;
};

struct ChartPanel {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<ChartSeries> series;
  std::vector<ChartMarker> markers;
};

void write_log_charts(const std::string& title, const std::vector<ChartPanel>& panels,
                      std::ostream& os);

// Decade ticks of [lo, hi] (powers of ten), at least the two ends' decades.
std::vector<double> decade_ticks(double lo, double hi);

}  // namespace racksim::analysis
