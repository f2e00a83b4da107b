#include "app/studies/collective_bench.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "common/error.h"
#include "common/number.h"
#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/topology_graph.h"
#include "workloads/collectives/collective_sweep.h"

namespace racksim::app {

double parse_byte_size(const std::string& text, const std::string& option) {
  auto bad = [&] {
    return InputError(SourceLocation{"command line", 0, 0}, option,
                      fmt::format("'{}' is not a byte count (examples: 8, 64K, 1M, 8G)", text));
  };
  // The number and an optional binary-multiple suffix ("64K" is 65,536 bytes; "8B" is 8).
  const size_t digits = text.find_last_not_of("KkMmGgTtB") + 1;
  const std::string suffix = text.substr(digits);
  double scale = 1;
  if (suffix == "K" || suffix == "k")
    scale = 1024.0;
  else if (suffix == "M" || suffix == "m")
    scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "t")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!suffix.empty() && suffix != "B")
    throw bad();
  const double value = parse_finite_number(std::string_view(text).substr(0, digits)).value_or(0);
  if (!(value > 0) || !std::isfinite(value * scale)) throw bad();
  return value * scale;
}

CollectiveKind parse_collective_kind(const std::string& text) {
  std::string t = text;
  std::replace(t.begin(), t.end(), '-', '_');
  for (CollectiveKind k : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                           CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll}) {
    if (t == to_string(k)) return k;
  }
  throw InputError(SourceLocation{"command line", 0, 0}, "--op",
                   fmt::format("unknown collective '{}'; expected all_reduce, all_gather, "
                               "reduce_scatter or all_to_all",
                               text));
}

std::vector<analysis::CollectiveRow> run_collective_bench(const CollectiveBenchRequest& request) {
  const topo::Topology topology = topo::build_cluster(request.hardware);
  if (request.ranks < 1 || request.ranks > topology.num_gpus()) {
    throw InputError(SourceLocation{"command line", 0, 0}, "--ranks",
                     fmt::format("{} ranks do not fit on {} GPUs ({} nodes x {})", request.ranks,
                                 topology.num_gpus(), topology.nodes, topology.gpus_per_node));
  }
  const auto sizes = doubling_sizes(request.min_bytes, request.max_bytes);
  const EventGraph graph = collective_sweep_graph(request.kind, request.ranks, sizes);
  std::vector<uint32_t> rank_to_gpu(request.ranks);
  std::iota(rank_to_gpu.begin(), rank_to_gpu.end(), 0u);
  sim::SimOptions options = sim::sim_options(request.hardware, request.measured_collectives);
  options.fidelity = request.fidelity;
  const auto result = sim::simulate(graph, topology, rank_to_gpu,
                                    sim::ComputeModel::from_hardware(request.hardware), options);
  const sim::Algorithm algorithm = sim::choose_algorithm(request.kind, options.algorithm,
                                                         sim::comm_shape(topology, rank_to_gpu));
  return analysis::collective_rows(graph, result, algorithm);
}

}  // namespace racksim::app
