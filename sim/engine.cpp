#include "sim/engine.h"

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
    p.domain.push_back(topology.node_of_gpu(gpu));
    p.local_index.push_back(static_cast<int>(gpu) % topology.gpus_per_node);
  }
  return p;
}

}  // namespace

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
  auto route_latency = [&](RankId from, RankId to) {
    auto& router = platform->router();
    return router.latency_s(
        router.route(topology.gpus[rank_to_gpu[from]], topology.gpus[rank_to_gpu[to]]));
  };
  Replay replay(graph, place_ranks(*platform, topology, rank_to_gpu), compute, options,
                route_latency);
  replay.start();
  engine.run();
  SimResult result = replay.finish();
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace racksim::sim
