// pipeline.svg: the step as a Gantt chart a person reads at a glance. One row per rank, grouped
// by pipeline stage; time on x with a labelled axis; forward, backward, weight-gradient,
// recompute, optimizer, communication, offload and idle in distinct colours (legend on top);
// micro-batch numbers on blocks wide enough to hold them; the critical path drawn as a red line
// through the rows it crosses. Blocks are aggregated to the pixel (analysis/pipeline_lanes.h),
// so the file stays small for thousands of blocks; above `max_rows` ranks, evenly spaced ranks
// of each group are drawn and the subtitle says how many.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analysis/critical_path.h"
#include "graph/event_graph.h"
#include "sim/engine.h"

namespace racksim::analysis {

struct PipelineSvgOptions {
  std::string title;
  std::string subtitle;
  // Group (pipeline stage) of each rank; empty: all ranks in one group (e.g. a replayed trace).
  std::vector<int> group_of_rank;
  std::string group_name = "stage";
  const CriticalPath* critical_path = nullptr;  // not drawn when null
  int plot_width_px = 1500;
  size_t max_rows = 128;
};

void write_pipeline_svg(const EventGraph& graph, const sim::SimResult& result,
                        const PipelineSvgOptions& options, std::ostream& out);

}  // namespace racksim::analysis
