#include "app/graph_memory.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"

namespace racksim::app {

namespace {

// Operations per layer per pass on one rank: the dense layer's compute kernels and its TP/CP
// collectives; a MoE layer adds routing, dispatch and combine. Upper figures from the shipped
// scenarios' report.json (sim.ops divided by the product below).
constexpr double kOpsPerDenseLayerPass = 16;
constexpr double kOpsPerMoeLayerPass = 28;
// Operations per rank outside the layers (embedding, head, optimizer, gradient buckets).
constexpr double kOpsPerRank = 200;
// Bytes per operation at the peak: the graph (op, dependencies, labels), the timing result, the
// engine's activity and flow state. Measured peak RSS / sim.ops on the shipped scenarios, with
// margin.
constexpr double kBytesPerOp = 1200;
// What the process takes however small the graph (SimGrid, the platform, protobuf).
constexpr double kBaseBytes = 200e6;

}  // namespace

GraphMemoryEstimate estimate_graph_memory(const config::Scenario& scenario,
                                          size_t simulated_ranks) {
  const config::Layout& layout = scenario.layout();
  const config::Training& training = scenario.training();
  const double dp = std::max(1, layout.dp());
  const double micro_batches =
      std::max(1.0, static_cast<double>(training.global_batch_size()) /
                        (std::max<int64_t>(1, training.micro_batch_size()) * dp));
  const double layers_per_rank =
      static_cast<double>(scenario.model().num_layers()) / std::max(1, layout.pp());
  const bool recompute = training.recompute() != config::Training::NONE &&
                         training.recompute() != config::Training::RECOMPUTE_UNSPECIFIED;
  const double passes = recompute ? 3 : 2;
  const double per_layer =
      scenario.model().num_experts() > 0 ? kOpsPerMoeLayerPass : kOpsPerDenseLayerPass;
  GraphMemoryEstimate estimate;
  estimate.ops = static_cast<double>(simulated_ranks) *
                 (micro_batches * layers_per_rank * passes * per_layer + kOpsPerRank);
  estimate.bytes = kBaseBytes + estimate.ops * kBytesPerOp;
  return estimate;
}

double machine_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<double>(pages) * page_size : 0;
}

void check_graph_fits(const config::Scenario& scenario, size_t simulated_ranks,
                      double available_bytes) {
  const GraphMemoryEstimate estimate = estimate_graph_memory(scenario, simulated_ranks);
  if (available_bytes <= 0 || estimate.bytes <= available_bytes) return;
  throw InputError(
      {"scenario", 0, 0}, "sim",
      fmt::format("the step's event graph needs about {:.3g} GB ({:.3g} M operations on {} "
                  "simulated ranks), more than this machine's {:.3g} GB; reduce it with "
                  "sim.fold_replicas: true (simulate one data-parallel replica), fewer "
                  "micro-batches (training.global_batch_size) or layers, or run it on a larger "
                  "machine",
                  estimate.bytes / 1e9, estimate.ops / 1e6, simulated_ranks,
                  available_bytes / 1e9));
}

}  // namespace racksim::app
