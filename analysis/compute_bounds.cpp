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

std::string_view json_key(sim::KernelBound bound) {
  switch (bound) {
    case sim::KernelBound::kGemmSustained:
      return "gemm_sustained";
    case sim::KernelBound::kGemmTiles:
      return "gemm_tiles";
    case sim::KernelBound::kGemmMemory:
      return "gemm_hbm";
    case sim::KernelBound::kCompute:
      return "flop_bound";
    case sim::KernelBound::kMemory:
      return "hbm_bound";
    case sim::KernelBound::kHost:
      return "host_bound";
    case sim::KernelBound::kGiven:
      return "fixed";
  }
  return "unknown";
}

ComputeBounds compute_bounds(const EventGraph& graph, RankId rank, const sim::ComputeModel& model) {
  ComputeBounds bounds;
  bounds.rank = rank;
  for (const Op& op : graph.ops()) {
    if (op.rank != rank || op.kind != OpKind::kCompute) continue;
    const KernelShape& shape = graph.shape(op.shape);
    bounds.seconds[static_cast<size_t>(model.bound_of(op, shape))] += model.duration_s(op, shape);
  }
  return bounds;
}

}  // namespace racksim::analysis
