#include "workloads/collectives/collective_sweep.h"

#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace racksim {

std::vector<double> doubling_sizes(double min_bytes, double max_bytes) {
  if (!(min_bytes > 0) || max_bytes < min_bytes) {
    throw std::invalid_argument(fmt::format(
        "sizes: need 0 < min-bytes <= max-bytes (got {} and {})", min_bytes, max_bytes));
  }
  std::vector<double> sizes;
  for (double s = min_bytes; s <= max_bytes * (1 + 1e-12); s *= 2) sizes.push_back(s);
  return sizes;
}

EventGraph collective_sweep_graph(CollectiveKind kind, uint32_t ranks,
                                  const std::vector<double>& sizes) {
  if (ranks < 1) throw std::invalid_argument("collective benchmark: need at least one rank");
  EventGraph graph(ranks);
  const StreamId stream = graph.add_stream("comm", StreamKind::kComm);
  std::vector<RankId> members(ranks);
  std::iota(members.begin(), members.end(), 0u);
  const CommId comm = graph.add_communicator(members);
  const std::string label(to_string(kind));
  for (RankId r = 0; r < ranks; ++r) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      OpContext ctx{r, stream, Phase::kOther, static_cast<int32_t>(i), -1};
      graph.add_collective(ctx, label, kind, comm, sizes[i], CommDim::kOther);
    }
  }
  return graph;
}

}  // namespace racksim
