// The energy ledger on hand-built timelines where each GPU's busy, communicating and idle
// seconds are known, against the algebra: energy = sum over states of GPUs x power x seconds.
#include <gtest/gtest.h>

#include "analysis/energy.h"

namespace racksim {
namespace {

using analysis::GpuStateSeconds;
using analysis::PowerModel;

struct Built {
  explicit Built(uint32_t ranks) : graph(ranks) {
    compute = graph.add_stream("compute", StreamKind::kCompute);
    comm = graph.add_stream("comm.pp", StreamKind::kComm);
  }
  EventGraph graph;
  sim::SimResult result;
  StreamId compute = 0;
  StreamId comm = 0;
  void time(OpId op, double start, double end) {
    result.timing.resize(graph.size());
    result.timing[op] = {start, end};
  }
  OpId kernel(RankId rank, double start, double end) {
    const OpId op = graph.add_compute({rank, compute, Phase::kForward, 0, 0}, "k", OpClass::kGemm,
                                      1, 0, DataType::kBf16);
    time(op, start, end);
    return op;
  }
};

PowerModel h100_like() {
  PowerModel p;
  p.gpu_busy_w = 700;
  p.gpu_comm_w = 315;
  p.gpu_idle_w = 140;
  return p;
}

// Every GPU computes for the whole step: GPU energy = GPUs x busy power x step time.
TEST(Energy, FullyBusyStepIsGpusTimesBusyPowerTimesTime) {
  Built b(2);
  b.kernel(0, 0, 1.25);
  b.kernel(0, 1.25, 2);
  b.kernel(1, 0, 2);
  const GpuStateSeconds s = analysis::gpu_state_seconds(b.graph, b.result, 2, 2);
  EXPECT_DOUBLE_EQ(s.busy_s, 4);
  EXPECT_DOUBLE_EQ(s.comm_s, 0);
  EXPECT_DOUBLE_EQ(s.idle_s, 0);
  analysis::ClusterParts parts;
  parts.gpus = 2;
  const auto e = analysis::step_energy(h100_like(), parts, s, 2, 1000);
  EXPECT_DOUBLE_EQ(e.gpu_j(), 2 * 700.0 * 2);
  EXPECT_DOUBLE_EQ(e.gpu_average_w(), 700);
  EXPECT_DOUBLE_EQ(e.j_per_token(), 2800.0 / 1000);
}

// Rank 0 computes [0,1] and sends [1,1.5]; rank 1 receives [1,1.5] and computes [1.5,2.5]:
// each GPU is busy 1 s, communicates 0.5 s and idles 1 s (rank 1's bubble before the data,
// rank 0's wait after its send) of the 2.5 s step.
TEST(Energy, BubbleAndExposedCommunicationCostTheirOwnPower) {
  Built b(2);
  b.kernel(0, 0, 1);
  const OpId send =
      b.graph.add_send({0, b.comm, Phase::kForward, 0, 0}, "send", 1, 7, 100, CommDim::kPp);
  b.time(send, 1, 1.5);
  const OpId recv =
      b.graph.add_recv({1, b.comm, Phase::kForward, 0, 0}, "recv", 0, 7, 100, CommDim::kPp);
  b.time(recv, 1, 1.5);
  b.kernel(1, 1.5, 2.5);
  const GpuStateSeconds s = analysis::gpu_state_seconds(b.graph, b.result, 2.5, 2);
  EXPECT_DOUBLE_EQ(s.busy_s, 2);
  EXPECT_DOUBLE_EQ(s.comm_s, 1);
  EXPECT_DOUBLE_EQ(s.idle_s, 2);
  analysis::ClusterParts parts;
  parts.gpus = 2;
  const auto e = analysis::step_energy(h100_like(), parts, s, 2.5, 0);
  EXPECT_DOUBLE_EQ(e.gpu_j(), 2 * 700.0 + 1 * 315.0 + 2 * 140.0);
  EXPECT_DOUBLE_EQ(e.gpu_average_w(), e.gpu_j() / (2 * 2.5));
}

// Communication hidden under a kernel costs busy power only, not both.
TEST(Energy, CommunicationUnderComputeIsBusyTime) {
  Built b(1);
  b.kernel(0, 0, 2);
  const CommId self = b.graph.add_communicator({0});
  const OpId ar = b.graph.add_collective({0, b.comm, Phase::kBackward, 0, 0}, "ar",
                                         CollectiveKind::kAllReduce, self, 64, CommDim::kDp);
  b.time(ar, 1.5, 3);
  const GpuStateSeconds s = analysis::gpu_state_seconds(b.graph, b.result, 4, 1);
  EXPECT_DOUBLE_EQ(s.busy_s, 2);
  EXPECT_DOUBLE_EQ(s.comm_s, 1);
  EXPECT_DOUBLE_EQ(s.idle_s, 1);
}

// Folded replicas: ranks 2 and 3 have no operations and mirror ranks 0 and 1; GPUs 4 and 5
// hold no rank and idle through the step.
TEST(Energy, MirroredRanksCountAsSimulatedOnesAndSpareGpusIdle) {
  Built b(4);
  b.kernel(0, 0, 1);
  b.kernel(1, 0, 0.5);
  const GpuStateSeconds s = analysis::gpu_state_seconds(b.graph, b.result, 1, 6);
  EXPECT_DOUBLE_EQ(s.busy_s, 2 * 1.5);
  EXPECT_DOUBLE_EQ(s.idle_s, 2 * 0.5 + 2 * 1);
  EXPECT_DOUBLE_EQ(s.total_s(), 6 * 1.0);
}

// The rest of the cluster draws constant power; the facility multiplies the IT energy by PUE.
TEST(Energy, OtherPartsAndPue) {
  PowerModel p = h100_like();
  p.cpu_w = 350;
  p.nvswitch_w = 100;
  p.nic_w = 25;
  p.switch_w = 1000;
  p.node_other_w = 1500;
  p.pue = 1.25;
  analysis::ClusterParts parts{16, 2, 4, 16, 3, 8};
  const GpuStateSeconds s{16 * 3.0, 0, 0};
  const auto e = analysis::step_energy(p, parts, s, 3, 0);
  EXPECT_DOUBLE_EQ(e.cpu_j, 4 * 350.0 * 3);
  EXPECT_DOUBLE_EQ(e.nvswitch_j, 8 * 100.0 * 3);
  EXPECT_DOUBLE_EQ(e.nic_j, 16 * 25.0 * 3);
  EXPECT_DOUBLE_EQ(e.switch_j, 3 * 1000.0 * 3);
  EXPECT_DOUBLE_EQ(e.node_other_j, 2 * 1500.0 * 3);
  const double it = 16 * 700.0 * 3 + e.cpu_j + e.nvswitch_j + e.nic_j + e.switch_j + e.node_other_j;
  EXPECT_DOUBLE_EQ(e.it_j(), it);
  EXPECT_DOUBLE_EQ(e.facility_j(), 1.25 * it);
  // A fully busy DGX H100 node draws the 8.4 kW Latif et al. measured (power_presets.cpp).
  EXPECT_DOUBLE_EQ((e.it_j() - e.switch_j) / 3 / 2, 8400);
}

}  // namespace
}  // namespace racksim
