#include "analysis/compute_bounds.h"

#include <numeric>

namespace racksim::analysis {

double ComputeBounds::total_s() const {
  return std::accumulate(seconds.begin(), seconds.end(), 0.0);
}

double ComputeBounds::share(sim::KernelBound bound) const {
  const double total = total_s();
  return total > 0 ? seconds[static_cast<size_t>(bound)] / total : 0;
}

ComputeBounds compute_bounds(const EventGraph& graph, RankId rank, const sim::ComputeModel& model) {
  ComputeBounds bounds;
  bounds.rank = rank;
  bounds.sustained_clock_ratio = model.sustained_clock_ratio;
  for (const Op& op : graph.ops()) {
    if (op.rank != rank || op.kind != OpKind::kCompute) continue;
    const sim::KernelTime time = model.timed(op, graph.shape(op.shape));
    bounds.seconds[static_cast<size_t>(time.bound)] += time.seconds;
  }
  return bounds;
}

}  // namespace racksim::analysis
