#include "app/graph_memory.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"

namespace racksim::app {

namespace {

// The estimate is a lower bound, so that nothing that would fit is refused: the fewest
// operations per layer and pass seen on the shipped scenarios (10.2 for the default dense
// scenario; 344 for the seed MoE case, whose layers add routing, dispatch, combine and the
// indexer), and the fewest bytes per operation at the peak (176 for the seed case at
// ANALYTIC fidelity: 1.0 GB peak RSS for 5.68 M operations; FULL fidelity adds flows).
constexpr double kOpsPerLayerPass = 10;
constexpr double kOpsPerRank = 20;  // embedding, head, optimizer, gradient buckets
constexpr double kBytesPerOp = 150;
constexpr double kBaseBytes = 50e6;  // SimGrid, protobuf
// The platform (hosts, links, routes) is built for every GPU, simulated or folded away: 12 KB
// per GPU measured on the small dense test scenario folded at 1,024 and 4,096 nodes (181 MB
// and 482 MB peak).
constexpr double kPlatformBytesPerGpu = 10e3;

}  // namespace

GraphMemoryEstimate estimate_graph_memory(const TrainingPlan& plan, size_t simulated_ranks) {
  const double micro_batches = std::max(1, plan.micro_batches);
  const double layers_per_rank =
      static_cast<double>(plan.model.layers()) / std::max(1, plan.layout.pp());
  const auto recompute_kind = plan.training.recompute;
  const bool recompute = recompute_kind != config::Training::NONE &&
                         recompute_kind != config::Training::RECOMPUTE_UNSPECIFIED;
  const double passes = recompute ? 3 : 2;
  GraphMemoryEstimate estimate;
  estimate.ops = static_cast<double>(simulated_ranks) *
                 (micro_batches * layers_per_rank * passes * kOpsPerLayerPass + kOpsPerRank);
  const double gpus = plan.cluster.gpus();
  estimate.bytes = kBaseBytes + estimate.ops * kBytesPerOp + gpus * kPlatformBytesPerGpu;
  return estimate;
}

double machine_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<double>(pages) * page_size : 0;
}

void check_graph_fits(const TrainingPlan& plan, size_t simulated_ranks, double available_bytes) {
  const GraphMemoryEstimate estimate = estimate_graph_memory(plan, simulated_ranks);
  if (available_bytes <= 0 || estimate.bytes <= available_bytes) return;
  throw InputError(
      {"scenario", 0, 0}, "sim",
      fmt::format("the step's event graph needs at least {:.3g} GB ({:.3g} M operations on {} "
                  "simulated ranks), more than this machine's {:.3g} GB; reduce it with "
                  "sim.fold_replicas: true (simulate one data-parallel replica), fewer "
                  "micro-batches (training.global_batch_size) or layers, or run it on a larger "
                  "machine",
                  estimate.bytes / 1e9, estimate.ops / 1e6, simulated_ranks,
                  available_bytes / 1e9));
}

}  // namespace racksim::app
