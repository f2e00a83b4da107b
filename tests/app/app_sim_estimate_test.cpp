// The feedback on long simulations (app/sim_estimate.h): the FULL-fidelity cost estimate from
// the graph's size, the hint it triggers, and the progress line. Pure functions: no timing.
#include <gtest/gtest.h>

#include <string>

#include "app/sim_estimate.h"

namespace racksim::app {
namespace {

// 8 ranks, each: one compute op, one all-reduce over all 8, one all-gather over ranks 0-3
// (ranks 0-3 only), one send to the next rank (and its recv).
EventGraph small_graph() {
  EventGraph g(8);
  const StreamId compute = g.add_stream("compute", StreamKind::kCompute);
  const StreamId comm = g.add_stream("comm", StreamKind::kComm);
  const CommId world = g.add_communicator({0, 1, 2, 3, 4, 5, 6, 7});
  const CommId half = g.add_communicator({0, 1, 2, 3});
  for (RankId r = 0; r < 8; ++r) {
    g.add_recorded_compute({r, compute}, "k", 1e-3, 0, 0);
    g.add_collective({r, comm}, "ar", CollectiveKind::kAllReduce, world, 1e6, CommDim::kDp);
    if (r < 4) {
      g.add_collective({r, comm}, "ag", CollectiveKind::kAllGather, half, 1e6, CommDim::kTp);
    }
    g.add_send({r, comm}, "s", (r + 1) % 8, 0, 1e3, CommDim::kPp);
    g.add_recv({(r + 1) % 8, comm}, "r", r, 0, 1e3, CommDim::kPp);
  }
  return g;
}

TEST(SimEstimate, CountsFullFlowsFromTheGraph) {
  const FullCostEstimate e = estimate_full_cost(small_graph());
  EXPECT_EQ(e.ops, 8u * 4 + 4);
  // all-reduce: 2(n-1) = 14 flows per member x 8; all-gather: n-1 = 3 x 4; sends: 8.
  EXPECT_DOUBLE_EQ(e.flows, 14 * 8 + 3 * 4 + 8);
  EXPECT_DOUBLE_EQ(e.cpu_s, 36 * kFullSecondsPerOp + e.flows * kFullSecondsPerFlow);
  // With the engine's choice: NVLS for the all-reduce (one flow per member), 2 rings.
  const FullCostEstimate nvls =
      estimate_full_cost(small_graph(), [](CommId comm, CollectiveKind kind, uint32_t members) {
        return member_flows(kind, members,
                            comm == 0 ? sim::Algorithm::kNvls : sim::Algorithm::kRing, 2);
      });
  EXPECT_DOUBLE_EQ(nvls.flows, 1 * 8 + 3 * 2 * 4 + 8);
}

TEST(SimEstimate, HintOnlyForLongFullRuns) {
  FullCostEstimate e;
  e.ops = 2'000'000;
  e.flows = 3.2e7;
  e.cpu_s = 900;
  const std::string hint = fidelity_hint(e, config::Simulation::FULL, "--fidelity ANALYTIC");
  EXPECT_NE(hint.find("3.2e+07 network flows over 2000000 operations"), std::string::npos) << hint;
  EXPECT_NE(hint.find("roughly 15 min of CPU"), std::string::npos) << hint;
  EXPECT_NE(hint.find("--fidelity ANALYTIC or AGGREGATED"), std::string::npos) << hint;
  EXPECT_EQ(fidelity_hint(e, config::Simulation::ANALYTIC, "x"), "");
  EXPECT_EQ(fidelity_hint(e, config::Simulation::AUTO, "x"), "");
  e.cpu_s = kHintAboveS - 1;
  EXPECT_EQ(fidelity_hint(e, config::Simulation::FULL, "x"), "");
}

TEST(SimEstimate, ProgressShownAtOnceOnATerminalLaterInALog) {
  EXPECT_FALSE(progress_due(true, 0.5));
  EXPECT_TRUE(progress_due(true, 1.0));
  EXPECT_FALSE(progress_due(false, 4.9));
  EXPECT_TRUE(progress_due(false, 5.0));
}

TEST(SimEstimate, ProgressLineEstimatesTheTimeLeft) {
  EXPECT_EQ(progress_line({250, 1000, 30, 0.125}),
            "simulating: 25 % of 1000 operations, 30 s wall, about 90 s left (simulated 0.125 s)");
  EXPECT_EQ(progress_line({500, 1000, 600, 2}),
            "simulating: 50 % of 1000 operations, 10 min wall, about 10 min left (simulated 2 s)");
  EXPECT_EQ(progress_line({0, 1000, 3, 0}),
            "simulating: 0 % of 1000 operations, 3 s wall (simulated 0 s)");
}

TEST(SimEstimate, FlowsPerMemberFollowTheAlgorithm) {
  EXPECT_EQ(member_flows(CollectiveKind::kAllReduce, 128, sim::Algorithm::kRing, 8), 254 * 8);
  EXPECT_EQ(member_flows(CollectiveKind::kAllGather, 128, sim::Algorithm::kRing, 8), 127 * 8);
  EXPECT_EQ(member_flows(CollectiveKind::kAllToAll, 128, sim::Algorithm::kDirect, 8), 127);
  EXPECT_EQ(member_flows(CollectiveKind::kAllReduce, 8, sim::Algorithm::kNvls, 1), 1);
  EXPECT_EQ(member_flows(CollectiveKind::kBroadcast, 8, sim::Algorithm::kChain, 1), 8);
  EXPECT_EQ(member_flows(CollectiveKind::kAllReduce, 1, sim::Algorithm::kRing, 1), 0);
  EXPECT_EQ(member_flows(CollectiveKind::kBarrier, 8, sim::Algorithm::kRing, 1), 0);
}

}  // namespace
}  // namespace racksim::app
