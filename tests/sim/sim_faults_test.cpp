// Faults as what-ifs (topologies/faults.h) against their algebra on an idle network: a degraded
// NVLink port or NIC slows a two-GPU ring all-reduce by its bandwidth factor, a dead NIC makes
// the neighbour NIC carry two GPUs' traffic, a straggler's kernels and a slow host's work take
// their factor times as long. One simulation per TEST (process).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/hardware_presets.h"
#include "topologies/topology_graph.h"
#include "workloads/collectives/collective_sweep.h"

namespace racksim {
namespace {

constexpr double kBytes = 256.0 * (1 << 20);

config::Hardware ring_preset(const std::string& name, int nodes) {
  config::Hardware hw = *topo::hardware_preset(name);
  hw.set_nodes(nodes);
  hw.mutable_collectives()->set_base_latency_s(0);
  hw.mutable_collectives()->set_algorithm(config::CollectiveTuning::RING);
  return hw;
}

double makespan(const sim::SimResult& result) {
  double end = 0;
  for (const auto& t : result.timing) end = std::max(end, t.end_s);
  return end;
}

// One all-reduce of kBytes per communicator, all at once, ranks on `gpus`.
double all_reduces_s(const config::Hardware& hw, const topo::Faults& faults,
                     const std::vector<uint32_t>& gpus,
                     const std::vector<std::vector<RankId>>& communicators) {
  EventGraph graph(static_cast<uint32_t>(gpus.size()));
  const StreamId stream = graph.add_stream("comm", StreamKind::kComm);
  for (const auto& members : communicators) {
    const CommId comm = graph.add_communicator(members);
    for (RankId r : members) {
      graph.add_collective({r, stream}, "all_reduce", CollectiveKind::kAllReduce, comm, kBytes,
                           CommDim::kDp);
    }
  }
  const topo::Topology topology = topo::build_cluster(hw, faults);
  return makespan(sim::simulate(graph, topology, gpus, sim::ComputeModel::from_hardware(hw),
                                sim::sim_options(hw, {})));
}

topo::Faults degraded(uint32_t gpu, topo::FaultPort port, double factor) {
  topo::Faults f;
  f.degraded_links.push_back({gpu, port, factor});
  return f;
}

// Two GPUs of one DGX H100: the ring's 2 steps of S/2 cross GPU 0's NVLink port in each
// direction, so at half its rate the transfer takes S / (0.5 x port).
TEST(Faults, HalfRateNvlinkPortDoublesATwoGpuRingAllReduce) {
  const config::Hardware hw = ring_preset("dgx-h100", 1);
  const double a = hw.scale_up().latency_s();
  const double port = 450e9 * hw.scale_up().efficiency();
  const double expected = 2 * a + kBytes / (0.5 * port);
  const double t = all_reduces_s(hw, degraded(0, topo::FaultPort::kScaleUp, 0.5), {0, 1}, {{0, 1}});
  EXPECT_NEAR(t, expected, 0.01 * expected);
}

// GPU 3 of node 0 and GPU 3 of node 1 over their NICs: 2 steps of S/2 at the NIC rate, at a
// quarter of it when GPU 3's NIC is degraded to 0.25.
TEST(Faults, QuarterRateNicSlowsAnInterNodePairByFour) {
  const config::Hardware hw = ring_preset("dgx-h100", 2);
  const double nic = 400e9 / 8 * hw.scale_out().efficiency();
  const double t = all_reduces_s(hw, degraded(3, topo::FaultPort::kNic, 0.25), {3, 11}, {{0, 1}});
  EXPECT_NEAR(t, kBytes / (0.25 * nic), 0.01 * kBytes / (0.25 * nic));
}

topo::Faults dead_nic(int node, int port) {
  topo::Faults f;
  f.dead_nics.push_back({node, port});
  return f;
}

// DGX H100: GPUs 2 and 3 share a PCIe switch with NICs 2 and 3. With port 3 of node 0 down,
// NCCL's choice gives GPU 3 NIC 2 (the nearest left), shared with GPU 2; node 1 is untouched.
TEST(Faults, DeadNicMovesItsGpuToTheNearestOtherPort) {
  const config::Hardware hw = ring_preset("dgx-h100", 2);
  const topo::Topology healthy = topo::build_cluster(hw);
  const topo::Topology t = topo::build_cluster(hw, dead_nic(0, 3));
  ASSERT_EQ(t.attachment[3].nics.size(), 1u);
  EXPECT_EQ(t.attachment[3].nics, healthy.attachment[2].nics);
  EXPECT_EQ(t.attachment[2].nics, healthy.attachment[2].nics);
  EXPECT_EQ(t.attachment[11].nics, healthy.attachment[11].nics);
  for (uint32_t g = 0; g < 8; ++g) {
    const auto& order = t.attachment[g].nic_order;
    EXPECT_EQ(std::count(order.begin(), order.end(), healthy.attachment[3].nics[0]), 0);
  }
}

// Pairs (GPU 2, GPU 10) and (GPU 3, GPU 11) all-reduce at once. Healthy, each pair has its own
// rail: S / NIC. With node 0's port 3 dead both pairs leave node 0 through NIC 2, which carries
// twice the bytes: 2 S / NIC.
TEST(Faults, DeadNicDoublesTheTrafficOnTheNeighbourNic_Healthy) {
  const config::Hardware hw = ring_preset("dgx-h100", 2);
  const double nic = 400e9 / 8 * hw.scale_out().efficiency();
  const double t = all_reduces_s(hw, {}, {2, 10, 3, 11}, {{0, 1}, {2, 3}});
  EXPECT_NEAR(t, kBytes / nic, 0.01 * kBytes / nic);
}

TEST(Faults, DeadNicDoublesTheTrafficOnTheNeighbourNic_Dead) {
  const config::Hardware hw = ring_preset("dgx-h100", 2);
  const double nic = 400e9 / 8 * hw.scale_out().efficiency();
  const double t = all_reduces_s(hw, dead_nic(0, 3), {2, 10, 3, 11}, {{0, 1}, {2, 3}});
  EXPECT_NEAR(t, 2 * kBytes / nic, 0.01 * 2 * kBytes / nic);
}

// Pure data parallelism: each of two ranks computes d seconds, then they all-reduce S bytes
// (2a + S / port on an idle NVLink). Rank 1 25 % slow: its kernel ends at 1.25 d and the
// all-reduce, which ends the step, starts there: the step is d + 2a + S / port longer by
// exactly 0.25 d.
TEST(Faults, StragglerDelaysADataParallelStepByItsSlowdown) {
  const config::Hardware hw = ring_preset("dgx-h100", 1);
  constexpr double d = 0.01;
  EventGraph graph(2);
  const StreamId compute = graph.add_stream("compute", StreamKind::kCompute);
  const CommId comm = graph.add_communicator({0, 1});
  std::vector<OpId> kernels, reduces;
  for (RankId r = 0; r < 2; ++r) {
    const OpId k = graph.add_recorded_compute({r, compute}, "backward", d, 0, 0);
    kernels.push_back(k);
    reduces.push_back(graph.add_collective({r, compute}, "grad all_reduce",
                                           CollectiveKind::kAllReduce, comm, kBytes, CommDim::kDp,
                                           std::vector<OpId>{k}));
  }
  sim::SimOptions options = sim::sim_options(hw, {});
  options.gpu_time_factor = {1.0, 1.25};
  const auto result = sim::simulate(graph, topo::build_cluster(hw), {0, 1},
                                    sim::ComputeModel::from_hardware(hw), options);
  EXPECT_DOUBLE_EQ(result.timing[kernels[0]].end_s, d);
  EXPECT_NEAR(result.timing[kernels[1]].end_s, 1.25 * d, 1e-12);
  const double port = 450e9 * hw.scale_up().efficiency();
  const double all_reduce_s = 2 * hw.scale_up().latency_s() + kBytes / port;
  const double step_s = makespan(result);
  EXPECT_NEAR(step_s, 1.25 * d + all_reduce_s, 0.01 * all_reduce_s);
  EXPECT_NEAR(result.timing[reduces[0]].end_s, step_s, 1e-12);  // rank 0 waited for rank 1
}

// A slow host's work (the host stream) takes its factor times as long; the GPU's kernels do not.
TEST(Faults, SlowHostStretchesHostWorkOnly) {
  const config::Hardware hw = ring_preset("dgx-h100", 1);
  EventGraph graph(1);
  const StreamId gpu = graph.add_stream("compute", StreamKind::kCompute);
  const StreamId host = graph.add_stream("cpu", StreamKind::kHost);
  const OpId cpu_adam = graph.add_recorded_compute({0, host}, "cpu adam", 0.01, 0, 0);
  const OpId kernel = graph.add_recorded_compute({0, gpu}, "forward", 0.004, 0, 0);
  sim::SimOptions options = sim::sim_options(hw, {});
  options.host_time_factor = {2.0};
  const auto result = sim::simulate(graph, topo::build_cluster(hw), {0},
                                    sim::ComputeModel::from_hardware(hw), options);
  EXPECT_NEAR(result.timing[cpu_adam].end_s, 0.02, 1e-12);
  EXPECT_NEAR(result.timing[kernel].end_s, 0.004, 1e-12);
}

TEST(Faults, ResolvedFactorsPerGpu) {
  topo::Faults f;
  f.stragglers.push_back({3, 0.2});
  f.stragglers.push_back({3, 0.5});
  f.slow_hosts.push_back({1, 3});
  const auto gpu = f.gpu_time_factors(16);
  EXPECT_DOUBLE_EQ(gpu[3], 1.2 * 1.5);
  EXPECT_DOUBLE_EQ(gpu[4], 1);
  const auto host = f.host_time_factors(16, 8);
  EXPECT_DOUBLE_EQ(host[7], 1);
  EXPECT_DOUBLE_EQ(host[8], 3);
  EXPECT_DOUBLE_EQ(host[15], 3);
}

}  // namespace
}  // namespace racksim
