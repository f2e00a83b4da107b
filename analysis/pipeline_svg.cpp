#include "analysis/pipeline_svg.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/pipeline_lanes.h"
#include "analysis/svg_axis.h"

namespace racksim::analysis {

namespace {

struct KindStyle {
  const char* name;
  const char* colour;
  const char* text_colour;  // for micro-batch numbers on the block
};

// Indexed by BlockKind. Colour-blind-safe Tableau hues; idle is a light grey so the bubble
// reads as "nothing here".
constexpr KindStyle kStyles[kNumBlockKinds] = {
    {"forward", "#4e79a7", "#ffffff"},         {"backward", "#f28e2b", "#ffffff"},
    {"weight gradient", "#b07aa1", "#ffffff"}, {"recompute", "#59a14f", "#ffffff"},
    {"optimizer", "#9c755f", "#ffffff"},       {"communication", "#edc948", "#000000"},
    {"offload", "#76b7b2", "#000000"},         {"idle (bubble, waiting)", "#e6e6e6", "#000000"},
    {"other", "#bab0ac", "#000000"},
};
constexpr const char* kPathColour = "#d62728";

constexpr double kLeftPx = 118;  // group and rank labels
constexpr double kRightPx = 24;
constexpr double kTopPx = 92;  // title, subtitle, legend
constexpr double kGroupGapPx = 6;
constexpr double kAxisPx = 48;

struct Row {
  RankId rank;
  int group;
  double y;  // top of the row
};

// The ranks to draw, grouped, evenly sampled within each group when there are too many.
std::vector<Row> choose_rows(uint32_t ranks, const std::vector<int>& group_of_rank,
                             size_t max_rows) {
  std::map<int, std::vector<RankId>> groups;
  for (RankId r = 0; r < ranks; ++r) {
    groups[r < group_of_rank.size() ? group_of_rank[r] : 0].push_back(r);
  }
  const size_t quota = std::max<size_t>(1, max_rows / groups.size());
  std::vector<Row> rows;
  for (const auto& [group, members] : groups) {
    const size_t keep = std::min(quota, members.size());
    for (size_t i = 0; i < keep; ++i) {
      rows.push_back({members[i * members.size() / keep], group, 0});
    }
  }
  return rows;
}

class SvgChart {
 public:
  SvgChart(const EventGraph& graph, const sim::SimResult& result, const PipelineSvgOptions& options,
           std::ostream& out)
      : graph_(graph), result_(result), options_(options), out_(out) {
    step_s_ = std::max(result.makespan_s, 1e-12);
    px_per_s_ = options.plot_width_px / step_s_;
    rows_ = choose_rows(graph.num_ranks(), options.group_of_rank, options.max_rows);
    row_h_ = std::clamp(720.0 / std::max<size_t>(rows_.size(), 1), 9.0, 28.0);
    double y = kTopPx;
    for (size_t i = 0; i < rows_.size(); ++i) {
      if (i > 0 && rows_[i].group != rows_[i - 1].group) y += kGroupGapPx;
      rows_[i].y = y;
      y += row_h_;
    }
    plot_bottom_ = y;
    width_ = kLeftPx + options.plot_width_px + kRightPx;
    height_ = plot_bottom_ + kAxisPx;
  }

  void write() {
    out_ << fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
        "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n",
        width_, height_, width_, height_);
    write_style();
    out_ << fmt::format("<rect width=\"{:.0f}\" height=\"{:.0f}\" fill=\"#ffffff\"/>\n", width_,
                        height_);
    write_header();
    write_grid();
    write_rows();
    write_critical_path();
    write_axis();
    out_ << "</svg>\n";
  }

 private:
  double x(double px_from_start) const { return kLeftPx + px_from_start; }
  double lane_h() const { return std::max(row_h_ * 0.66, 4.0); }
  double transfer_h() const { return std::max(row_h_ * 0.2, 1.5); }

  void write_style() {
    out_ << "<style>\n";
    for (int k = 0; k < kNumBlockKinds; ++k) {
      out_ << fmt::format(".k{}{{fill:{}}} .t{}{{fill:{}}}\n", k, kStyles[k].colour, k,
                          kStyles[k].text_colour);
    }
    out_ << "text{font-size:11px} .mb{font-size:" << fmt::format("{:.0f}", mb_font_px())
         << "px;text-anchor:middle}\n</style>\n";
  }

  double mb_font_px() const { return std::clamp(lane_h() - 2, 6.0, 10.0); }

  void write_header() {
    out_ << fmt::format(
        "<text x=\"12\" y=\"22\" style=\"font-size:16px;font-weight:bold\">{}</text>\n",
        xml_escape(options_.title));
    std::string subtitle = options_.subtitle;
    if (rows_.size() < graph_.num_ranks()) {
      subtitle += fmt::format("  ({} of {} ranks shown, evenly spaced in each {})", rows_.size(),
                              graph_.num_ranks(), options_.group_name);
    }
    out_ << fmt::format("<text x=\"12\" y=\"40\" style=\"font-size:12px\">{}</text>\n",
                        xml_escape(subtitle));
    // The legend: one swatch per kind, the transfer lane, and the critical path.
    out_ << "<g class=\"legend\">\n";
    double lx = 12;
    const double ly = 56;
    for (int k = 0; k < kNumBlockKinds; ++k) {
      out_ << fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" class=\"k{}\" "
          "stroke=\"#666\" stroke-width=\"0.5\"/><text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
          lx, ly, k, lx + 16, ly + 10, kStyles[k].name);
      lx += 16 + 7.0 * std::string(kStyles[k].name).size() + 14;
    }
    out_ << fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-width=\"2.5\"/><text x=\"{:.1f}\" y=\"{:.1f}\">critical path</text>\n",
        lx, ly + 6, lx + 22, ly + 6, kPathColour, lx + 26, ly + 10);
    out_ << fmt::format(
        "<text x=\"12\" y=\"{:.1f}\" style=\"font-size:10px;fill:#555\">Each row: upper band = "
        "compute stream (gaps coloured by what it waited for), thin lower band = transfers in "
        "flight; numbers are micro-batches.</text>\n",
        ly + 28);
    out_ << "</g>\n";
  }

  void write_grid() {
    const TimeAxis axis = time_axis(step_s_);
    out_ << "<g class=\"grid\" stroke=\"#d0d0d0\" stroke-width=\"0.5\">\n";
    for (double t : axis.ticks_s) {
      const double gx = x(t * px_per_s_);
      out_ << fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n", gx,
                          kTopPx - 2, gx, plot_bottom_);
    }
    out_ << "</g>\n";
  }

  void write_rows() {
    const std::vector<RankLanes> lanes = build_lanes(graph_, result_, step_s_, px_per_s_);
    std::vector<bool> on_path(graph_.num_ranks(), false);
    if (options_.critical_path) {
      for (const PathSegment& s : options_.critical_path->segments) on_path[s.rank] = true;
    }
    for (size_t i = 0; i < rows_.size(); ++i) {
      const Row& row = rows_[i];
      if (i == 0 || row.group != rows_[i - 1].group) write_group_label(i);
      out_ << fmt::format("<g class=\"rank-row\" data-rank=\"{}\">\n", row.rank);
      out_ << fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" style=\"font-size:{:.0f}px;text-anchor:end{}\">rank "
          "{}</text>\n",
          kLeftPx - 6, row.y + lane_h(), std::min(row_h_ - 1, 11.0),
          on_path[row.rank] ? fmt::format(";fill:{};font-weight:bold", kPathColour) : "", row.rank);
      for (const Block& b : lanes[row.rank].compute) write_block(b, row.y + 1, lane_h(), true);
      const double ty = row.y + 1 + lane_h() + 1;
      for (const Block& b : lanes[row.rank].transfers) write_block(b, ty, transfer_h(), false);
      out_ << "</g>\n";
    }
  }

  void write_group_label(size_t first_row) {
    const int group = rows_[first_row].group;
    size_t last = first_row;
    while (last + 1 < rows_.size() && rows_[last + 1].group == group) ++last;
    const double top = rows_[first_row].y;
    const double bottom = rows_[last].y + row_h_;
    if (first_row > 0) {
      out_ << fmt::format(
          "<line x1=\"4\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#888\" "
          "stroke-width=\"0.8\"/>\n",
          top - kGroupGapPx / 2, width_ - 4, top - kGroupGapPx / 2);
    }
    if (options_.group_of_rank.empty()) return;  // one group: nothing to name
    out_ << fmt::format(
        "<text x=\"8\" y=\"{:.1f}\" style=\"font-size:12px;font-weight:bold\">{} {}</text>\n",
        (top + bottom) / 2 + 4, xml_escape(options_.group_name), group);
  }

  void write_block(const Block& b, double y, double h, bool label) {
    const double w = b.x1 - b.x0;
    const int k = static_cast<int>(b.kind);
    out_ << fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" class=\"k{}\"/>\n",
        x(b.x0), y, w, h, k);
    if (!label || b.micro_batch < 0 || lane_h() < 8) return;
    const std::string text = std::to_string(b.micro_batch);
    if (w < 0.62 * mb_font_px() * static_cast<double>(text.size()) + 3) return;
    out_ << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"mb t{}\">{}</text>\n",
                        x((b.x0 + b.x1) / 2), y + h / 2 + mb_font_px() * 0.36, k, text);
  }

  void write_critical_path() {
    if (!options_.critical_path) return;
    std::vector<double> row_y(graph_.num_ranks(), -1);
    for (const Row& r : rows_) row_y[r.rank] = r.y + 1 + lane_h() - 1;
    std::string points;
    double last_x = -1, last_y = -1;
    auto add = [&](double px, double py) {
      if (std::abs(px - last_x) < 0.05 && std::abs(py - last_y) < 0.05) return;
      points += fmt::format("{:.1f},{:.1f} ", px, py);
      last_x = px;
      last_y = py;
    };
    for (const PathSegment& s : options_.critical_path->segments) {
      if (row_y[s.rank] < 0) continue;  // a rank not drawn: the line jumps over it
      add(x(s.start_s * px_per_s_), row_y[s.rank]);
      add(x(s.end_s * px_per_s_), row_y[s.rank]);
    }
    out_ << fmt::format(
        "<polyline class=\"critical-path\" points=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"2\" stroke-linejoin=\"round\" opacity=\"0.9\"/>\n",
        points, kPathColour);
  }

  void write_axis() {
    const TimeAxis axis = time_axis(step_s_);
    const double y = plot_bottom_ + 4;
    out_ << fmt::format(
        "<g class=\"axis\"><line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
        "stroke=\"#000\"/>\n",
        x(0), y, x(options_.plot_width_px), y);
    for (double t : axis.ticks_s) {
      const double tx = x(t * px_per_s_);
      out_ << fmt::format(
          "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#000\"/>"
          "<text x=\"{:.1f}\" y=\"{:.1f}\" style=\"text-anchor:middle\">{}</text>\n",
          tx, y, tx, y + 5, tx, y + 17, axis.label(t));
    }
    out_ << fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" style=\"text-anchor:middle;font-size:12px\">time ({}) "
        "- step time {:.4g} {}</text></g>\n",
        x(options_.plot_width_px / 2.0), y + 36, axis.unit, step_s_ / axis.unit_s, axis.unit);
  }

  const EventGraph& graph_;
  const sim::SimResult& result_;
  const PipelineSvgOptions& options_;
  std::ostream& out_;
  double step_s_ = 0;
  double px_per_s_ = 0;
  std::vector<Row> rows_;
  double row_h_ = 10;
  double plot_bottom_ = 0;
  double width_ = 0;
  double height_ = 0;
};

}  // namespace

void write_pipeline_svg(const EventGraph& graph, const sim::SimResult& result,
                        const PipelineSvgOptions& options, std::ostream& out) {
  SvgChart(graph, result, options, out).write();
}

}  // namespace racksim::analysis
