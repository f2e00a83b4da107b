// Collectives timed from a measured nccl-tests table (hardware.collectives.measured_table): a
// collective inside one scale-up domain takes the table's time exactly, without the call's base
// latency (analytic, or flows that end no sooner); one the table does not cover runs as the
// model has it. One simulation per TEST (process).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/hardware_presets.h"
#include "topologies/topology_graph.h"
#include "workloads/collectives/collective_sweep.h"

namespace racksim {
namespace {

config::Hardware dgx_a100_with_table(int nodes, const std::string& table =
                                                    "gpus,size_bytes,time_us\n"
                                                    "4,1000000,100\n"
                                                    "4,3000000,300\n"
                                                    "8,1000000,50\n") {
  config::Hardware hw = *topo::hardware_preset("dgx-a100");
  hw.set_nodes(nodes);
  hw.mutable_collectives()->set_base_latency_s(30e-6);
  // ctest runs each test in its own process, several at once: one file per process.
  const std::string path =
      ::testing::TempDir() + "racksim-measured-table-" + std::to_string(::getpid()) + ".csv";
  std::ofstream(path) << table;
  hw.mutable_collectives()->set_measured_table(path);
  return hw;
}

struct OneCollective {
  double time_s = 0;
  sim::SimResult result;
};

OneCollective simulate_one(double bytes, const config::Hardware& hw,
                           const std::vector<uint32_t>& gpus,
                           config::Simulation::Fidelity fidelity = config::Simulation::FULL) {
  const EventGraph graph = collective_sweep_graph(CollectiveKind::kAllReduce,
                                                  static_cast<uint32_t>(gpus.size()), {bytes});
  const topo::Topology topology = topo::build_cluster(hw);
  OneCollective one;
  // The table as the loader reads it (config::read_measured_table): the engine opens no file.
  topo::MeasuredCollectives measured;
  if (hw.collectives().has_measured_table()) {
    measured = topo::read_measured_collectives(hw.collectives().measured_table(), {},
                                               "hardware.collectives.measured_table");
  }
  sim::SimOptions options = sim::sim_options(hw, std::move(measured));
  options.fidelity = fidelity;
  one.result = sim::simulate(graph, topology, gpus, sim::ComputeModel::from_hardware(hw), options);
  double start = 0, end = 0;
  for (const auto& t : one.result.timing) {
    start = std::max(start, t.start_s);
    end = std::max(end, t.end_s);
  }
  one.time_s = end - start;
  return one;
}

// FULL runs the flows (they load the links) and ends no sooner than the measurement.
TEST(MeasuredCollectivesSim, AnAllReduceInsideANodeTakesTheTablesInterpolatedTime) {
  const auto one = simulate_one(2e6, dgx_a100_with_table(1), {0, 1, 2, 3});
  EXPECT_NEAR(one.time_s, 200e-6, 1e-12);  // halfway between 100 and 300 us; no base latency
  EXPECT_EQ(one.result.measured_table_collectives, 1u);
  EXPECT_GT(one.result.flows, 0u);
}

TEST(MeasuredCollectivesSim, AnalyticFidelityTakesTheTimeWithoutFlows) {
  const auto one =
      simulate_one(2e6, dgx_a100_with_table(1), {0, 1, 2, 3}, config::Simulation::ANALYTIC);
  EXPECT_NEAR(one.time_s, 200e-6, 1e-12);
  EXPECT_EQ(one.result.measured_table_collectives, 1u);
  EXPECT_EQ(one.result.flows, 0u);
}

// A measurement faster than the flows can go (1 us for 64 MB) is a floor they pass: the ring
// decides, 2 (n-1) steps each of 64 MB / n at NVLink's 300 GB/s x its efficiency plus its
// latency (390 us + 6 x 1.5 us on DGX A100), and the base latency is not added.
TEST(MeasuredCollectivesSim, FlowsSlowerThanTheMeasurementDecide) {
  const config::Hardware hw = dgx_a100_with_table(1, "gpus,size_bytes,time_us\n4,64000000,1\n");
  const auto one = simulate_one(64e6, hw, {0, 1, 2, 3});
  const double steps = 2.0 * 3;
  const double ring_s =
      steps * (64e6 / 4 / (300e9 * hw.scale_up().efficiency()) + hw.scale_up().latency_s());
  EXPECT_NEAR(one.time_s, ring_s, 1e-3 * ring_s);
  EXPECT_EQ(one.result.measured_table_collectives, 1u);
}

TEST(MeasuredCollectivesSim, AMemberCountTheTableLacksRunsAsFlows) {
  const auto one = simulate_one(2e6, dgx_a100_with_table(1), {0, 1});
  EXPECT_EQ(one.result.measured_table_collectives, 0u);
  EXPECT_GT(one.result.flows, 0u);
  EXPECT_GT(one.time_s, 30e-6);  // the base latency and the ring's flows
}

TEST(MeasuredCollectivesSim, FourGpusOverTwoNodesRunAsFlows) {
  // Four members, as the table has, but split over two servers: the table measured one domain.
  const auto one = simulate_one(2e6, dgx_a100_with_table(2), {0, 1, 8, 9});
  EXPECT_EQ(one.result.measured_table_collectives, 0u);
  EXPECT_GT(one.result.flows, 0u);
}

}  // namespace
}  // namespace racksim
