// Host <-> device copies (OpKind::kCopy): a flow between the GPU and the CPU socket of the op's
// NUMA node, over the GPU's PCIe path, and the inter-socket link for the other socket's memory.
// One simulation per TEST (process). DGX H100: PCIe Gen5 63 GB/s x 0.85 per link, 0.5 us per
// link, GPU -> PCIe switch -> CPU; GPUs 0 and 1 share a switch; GPUs 0-3 on socket 0.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/hardware_presets.h"
#include "topologies/topology_graph.h"

namespace racksim {
namespace {

constexpr double kBytes = 1e9;

config::Hardware dgx() {
  config::Hardware hw = *topo::hardware_preset("dgx-h100");
  hw.set_nodes(1);
  return hw;
}

struct Copy {
  RankId rank;
  uint32_t numa_node;
  CopyDirection direction;
};

// One copy op per entry on its rank's copy stream, optionally a kernel of `compute_s` on rank 0.
sim::SimResult run(const std::vector<Copy>& copies, uint32_t ranks, double compute_s = 0) {
  EventGraph graph(ranks);
  const StreamId compute = graph.add_stream("compute", StreamKind::kCompute);
  const StreamId copy = graph.add_stream("copy", StreamKind::kCopy);
  if (compute_s > 0) graph.add_recorded_compute({0, compute}, "kernel", compute_s, 0, 0);
  for (const Copy& c : copies) {
    graph.add_copy({c.rank, copy}, "offload", c.direction, c.numa_node, kBytes);
  }
  const config::Hardware hw = dgx();
  const topo::Topology topology = topo::build_cluster(hw);
  std::vector<uint32_t> gpus(ranks);
  for (uint32_t r = 0; r < ranks; ++r) gpus[r] = r;
  return sim::simulate(graph, topology, gpus, sim::ComputeModel::from_hardware(hw),
                       sim::sim_options(hw, {}));
}

const double kPcie = 63e9 * 0.85;
const double kPcieLink = 0.5e-6;

void expect_close(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-6 * expected) << "actual " << actual << " expected " << expected;
}

TEST(Copy, HostToDeviceFromTheOwnSocketCrossesTwoPcieLinks) {
  const auto r = run({{0, 0, CopyDirection::kHostToDevice}}, 1);
  expect_close(r.timing[0].end_s, 2 * kPcieLink + kBytes / kPcie);
  EXPECT_EQ(r.flows, 1u);
}

TEST(Copy, TheOtherSocketsMemoryAddsTheInterSocketLink) {
  const auto r = run({{0, 1, CopyDirection::kDeviceToHost}}, 1);
  // UPI (128 GB/s x 0.85) is wider than PCIe, so only its latency shows.
  expect_close(r.timing[0].end_s, 0.3e-6 + 2 * kPcieLink + kBytes / kPcie);
}

TEST(Copy, TwoGpusOfOneSwitchShareItsUplink) {
  const auto r =
      run({{0, 0, CopyDirection::kDeviceToHost}, {1, 0, CopyDirection::kDeviceToHost}}, 2);
  expect_close(r.timing[0].end_s, 2 * kPcieLink + 2 * kBytes / kPcie);
  expect_close(r.timing[1].end_s, 2 * kPcieLink + 2 * kBytes / kPcie);
}

TEST(Copy, OppositeDirectionsDoNotShare) {
  const auto r =
      run({{0, 0, CopyDirection::kDeviceToHost}, {1, 0, CopyDirection::kHostToDevice}}, 2);
  expect_close(r.timing[0].end_s, 2 * kPcieLink + kBytes / kPcie);
  expect_close(r.timing[1].end_s, 2 * kPcieLink + kBytes / kPcie);
}

TEST(Copy, CopiesOnTheirStreamOverlapCompute) {
  const auto r = run({{0, 0, CopyDirection::kDeviceToHost}}, 1, /*compute_s=*/0.05);
  EXPECT_NEAR(r.makespan_s, 0.05, 1e-9);  // the 18.7 ms copy hides under the 50 ms kernel
  expect_close(r.timing[1].end_s, 2 * kPcieLink + kBytes / kPcie);
}

TEST(Copy, ANumaNodeTheServerLacksIsRejected) {
  EXPECT_THROW(run({{0, 2, CopyDirection::kHostToDevice}}, 1), std::runtime_error);
}

}  // namespace
}  // namespace racksim
