// The critical path on hand-built graphs with hand-set timings, where the path is known:
// it follows the dependency that released each operation, crosses ranks through a send and its
// recv and through a collective's last member to arrive, and tiles the step time.
#include <gtest/gtest.h>

#include "analysis/critical_path.h"

namespace racksim {
namespace {

using analysis::PathKind;

struct Built {
  EventGraph graph{2};
  sim::SimResult result;
  void time(OpId op, double start, double end, OpId released_by = kNoOp) {
    result.timing.resize(graph.size());
    result.released_by.resize(graph.size(), kNoOp);
    result.timing[op] = {start, end};
    result.released_by[op] = released_by;
    result.makespan_s = std::max(result.makespan_s, end);
  }
};

// Rank 0 computes A [0,1] and sends it to rank 1 [1,1.5]; rank 1 computes C [0,0.5] (not
// critical: it ends early) then B [1.5,3] on the received data.
TEST(CriticalPath, CrossesRanksThroughSendAndRecv) {
  Built b;
  EventGraph& g = b.graph;
  const StreamId compute = g.add_stream("compute", StreamKind::kCompute);
  const StreamId comm = g.add_stream("comm.pp", StreamKind::kComm);
  const OpId a = g.add_compute({0, compute, Phase::kForward, 0, 0}, "A", OpClass::kGemm, 1, 0,
                               DataType::kBf16);
  const OpId send = g.add_send({0, comm, Phase::kForward, 0, 0}, "send", 1, 7, 100, CommDim::kPp,
                               std::vector<OpId>{a});
  const OpId c = g.add_compute({1, compute, Phase::kForward, 0, 0}, "C", OpClass::kGemm, 1, 0,
                               DataType::kBf16);
  const OpId recv = g.add_recv({1, comm, Phase::kForward, 0, 0}, "recv", 0, 7, 100, CommDim::kPp);
  const OpId bb = g.add_compute({1, compute, Phase::kBackward, 0, 0}, "B", OpClass::kGemm, 1, 0,
                                DataType::kBf16, std::vector<OpId>{recv});
  b.time(a, 0, 1);
  b.time(send, 1, 1.5, a);
  b.time(c, 0, 0.5);
  b.time(recv, 1, 1.5, send);
  b.time(bb, 1.5, 3, recv);

  const auto path = analysis::critical_path(g, b.result);
  ASSERT_EQ(path.segments.size(), 3u);
  EXPECT_EQ(path.segments[0].op, a);
  EXPECT_EQ(path.segments[1].op, recv);  // the transfer, charged once
  EXPECT_EQ(path.segments[2].op, bb);
  EXPECT_DOUBLE_EQ(path.length_s, 3);
  EXPECT_DOUBLE_EQ(path.seconds(PathKind::kForward), 1);
  EXPECT_DOUBLE_EQ(path.seconds(PathKind::kBackward), 1.5);
  EXPECT_DOUBLE_EQ(path.comm_seconds(CommDim::kPp), 0.5);
  EXPECT_DOUBLE_EQ(path.by_rank_s[0], 1);
  EXPECT_DOUBLE_EQ(path.by_rank_s[1], 2);
  EXPECT_EQ(path.rank_changes, 1u);
}

// An all-reduce: rank 0 arrives at 1, rank 1 at 2 (after a 2 s kernel); it runs [2, 2.5];
// then rank 0 computes until 3.5. The path: rank 1's kernel, the all-reduce from the last
// arrival, rank 0's kernel. Rank 0's early compute and its wait are not on it.
TEST(CriticalPath, CollectiveContinuesAtTheLastArrival) {
  Built b;
  EventGraph& g = b.graph;
  const StreamId compute = g.add_stream("compute", StreamKind::kCompute);
  const StreamId comm = g.add_stream("comm.tp", StreamKind::kComm);
  const CommId both = g.add_communicator({0, 1});
  const OpId k0 = g.add_compute({0, compute, Phase::kForward, 0, 0}, "k0", OpClass::kGemm, 1, 0,
                                DataType::kBf16);
  const OpId ar0 =
      g.add_collective({0, comm, Phase::kForward, 0, 0}, "ar", CollectiveKind::kAllReduce, both, 64,
                       CommDim::kTp, std::vector<OpId>{k0});
  const OpId tail = g.add_compute({0, compute, Phase::kForward, 0, 0}, "tail", OpClass::kGemm, 1, 0,
                                  DataType::kBf16, std::vector<OpId>{ar0});
  const OpId k1 = g.add_compute({1, compute, Phase::kForward, 0, 0}, "k1", OpClass::kGemm, 1, 0,
                                DataType::kBf16);
  const OpId ar1 =
      g.add_collective({1, comm, Phase::kForward, 0, 0}, "ar", CollectiveKind::kAllReduce, both, 64,
                       CommDim::kTp, std::vector<OpId>{k1});
  b.time(k0, 0, 1);
  b.time(ar0, 1, 2.5, k0);
  b.time(tail, 2.5, 3.5, ar0);
  b.time(k1, 0, 2);
  b.time(ar1, 2, 2.5, k1);

  const auto path = analysis::critical_path(g, b.result);
  ASSERT_EQ(path.segments.size(), 3u);
  EXPECT_EQ(path.segments[0].op, k1);
  EXPECT_EQ(path.segments[1].op, ar0);
  EXPECT_DOUBLE_EQ(path.segments[1].start_s, 2);  // from the last arrival, not rank 0's
  EXPECT_EQ(path.segments[2].op, tail);
  EXPECT_DOUBLE_EQ(path.comm_seconds(CommDim::kTp), 0.5);
  EXPECT_DOUBLE_EQ(path.seconds(PathKind::kForward), 3);
  EXPECT_DOUBLE_EQ(path.by_rank_s[1], 2);
  EXPECT_DOUBLE_EQ(path.by_rank_s[0], 1.5);
}

// A gap nothing explains (the first kernel starts late) is charged as waiting, so the
// segments still tile the step.
TEST(CriticalPath, TilesTheStepWithWaits) {
  Built b;
  EventGraph& g = b.graph;
  const StreamId compute = g.add_stream("compute", StreamKind::kCompute);
  const OpId x = g.add_compute({0, compute, Phase::kOptimizer, -1, -1}, "x", OpClass::kOther, 1, 0,
                               DataType::kBf16);
  const OpId y = g.add_compute({1, compute, Phase::kForward, 0, 0}, "y", OpClass::kGemm, 1, 0,
                               DataType::kBf16);
  b.time(x, 0.25, 1);
  b.time(y, 0, 0.5);
  const auto path = analysis::critical_path(g, b.result);
  double total = 0;
  for (const auto& s : path.segments) total += s.seconds();
  EXPECT_DOUBLE_EQ(total, 1);
  EXPECT_DOUBLE_EQ(path.seconds(PathKind::kWait), 0.25);
  EXPECT_DOUBLE_EQ(path.seconds(PathKind::kOptimizer), 0.75);
  const auto top = analysis::top_path_operations(g, path, 5);
  ASSERT_FALSE(top.empty());
  EXPECT_EQ(top[0].label, "x");
}

}  // namespace
}  // namespace racksim
