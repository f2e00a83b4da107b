#include "sim/engine.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>

#include "sim/replay.h"
#include "topologies/engine_config.h"
#include "topologies/platform.h"

namespace racksim::sim {

namespace {

RankPlacement place_ranks(const topo::Platform& platform, const topo::Topology& topology,
                          const std::vector<uint32_t>& rank_to_gpu) {
  RankPlacement p;
  for (uint32_t gpu : rank_to_gpu) {
    if (gpu >= platform.num_gpus()) {
      throw std::runtime_error(fmt::format("rank placed on GPU {}, but the topology has {} GPUs",
                                           gpu, platform.num_gpus()));
    }
    p.host.push_back(platform.gpu_host(gpu));
    p.nvls_host.push_back(platform.nvls_host(gpu));
    // Rings are grouped by scale-up domain: for an NVL72 rack that is the 72-GPU rack, not
    // the 4-GPU tray (node).
    p.domain.push_back(topology.scale_up_domain_of_gpu(gpu));
    p.local_index.push_back(topology.index_in_domain(gpu));
    auto& sockets = p.numa_hosts.emplace_back();
    const int per_node = topology.sockets_per_node();
    for (int s = 0; s < per_node; ++s) {
      sockets.push_back(platform.cpu_host(topology.node_of_gpu(gpu) * per_node + s));
    }
  }
  p.nvls = topology.spec.scale_up.nvls;
  p.nvls_bytes_per_s = topology.spec.scale_up.nvls_bytes_per_s;
  p.mesh = topology.spec.node.kind == topo::NodeKind::kMesh;
  return p;
}

}  // namespace

Algorithm to_algorithm(config::CollectiveTuning::Algorithm algorithm) {
  switch (algorithm) {
    case config::CollectiveTuning::RING:
      return Algorithm::kRing;
    case config::CollectiveTuning::TREE:
      return Algorithm::kTree;
    case config::CollectiveTuning::NVLS:
      return Algorithm::kNvls;
    case config::CollectiveTuning::HIERARCHICAL:
      return Algorithm::kHierarchical;
    default:
      return Algorithm::kAuto;
  }
}

bool merges_ring_hops(config::Simulation::Fidelity fidelity) {
  return fidelity == config::Simulation::AGGREGATED || fidelity == config::Simulation::ANALYTIC ||
         fidelity == config::Simulation::AUTO;
}

double fidelity_error_budget(config::Simulation::Fidelity fidelity) {
  return fidelity == config::Simulation::FULL ? 0.0 : kDefaultErrorBudget;
}

SimOptions sim_options(const config::Hardware& hardware, topo::MeasuredCollectives measured) {
  SimOptions options;
  options.collective_base_latency_s = hardware.collectives().base_latency_s();
  options.collective_host_skew_s = hardware.collectives().host_skew_s();
  options.algorithm = to_algorithm(hardware.collectives().algorithm());
  options.measured_collectives = std::move(measured);
  return options;
}

CommShape comm_shape(const topo::Topology& topology, const std::vector<uint32_t>& gpus) {
  CommShape shape;
  for (uint32_t gpu : gpus) {
    shape.domain.push_back(topology.scale_up_domain_of_gpu(gpu));
    shape.local.push_back(topology.index_in_domain(gpu));
  }
  shape.nvls = topology.spec.scale_up.nvls;
  shape.nvls_bytes_per_s = topology.spec.scale_up.nvls_bytes_per_s;
  shape.mesh = topology.spec.node.kind == topo::NodeKind::kMesh;
  return shape;
}

SimResult simulate(const EventGraph& graph, const topo::Topology& topology,
                   const std::vector<uint32_t>& rank_to_gpu, const ComputeModel& compute,
                   const SimOptions& options) {
  if (rank_to_gpu.size() != graph.num_ranks()) {
    throw std::runtime_error(
        fmt::format("{} ranks but {} placements", graph.num_ranks(), rank_to_gpu.size()));
  }
  const auto wall_start = std::chrono::steady_clock::now();
  int argc = 1;
  char name[] = "racksim";
  char* argv[] = {name, nullptr};
  simgrid::s4u::Engine engine(&argc, argv);
  topo::configure_engine_for_gpus();
  auto platform = topo::build_platform(topology, compute.bf16_flops_per_s);
  FabricView fabric(topology, platform->router(), rank_to_gpu);
  Replay replay(graph, place_ranks(*platform, topology, rank_to_gpu), compute, options, &fabric);
  replay.start();
  engine.run();
  SimResult result = replay.finish();
  result.fidelity = options.fidelity;
  result.simulated_ranks =
      options.simulated_ranks.empty()
          ? graph.num_ranks()
          : static_cast<uint32_t>(
                std::count(options.simulated_ranks.begin(), options.simulated_ranks.end(), true));
  result.routes_computed = platform->router().routes_computed();
  result.gpu_pairs = static_cast<uint64_t>(topology.num_gpus()) * (topology.num_gpus() - 1);
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace racksim::sim
