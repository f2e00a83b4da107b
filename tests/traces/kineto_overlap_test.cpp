// A replayed Kineto trace with kernels on two CUDA streams: the breakdown of the critical rank
// counts each moment once, busy when any kernel runs, even when a kernel issued later starts
// earlier (it runs while an earlier-issued one waits for a collective). One simulation.
#include <gtest/gtest.h>

#include <string>

#include "app/trace_replay.h"
#include "tests/support/kineto_trace.h"
#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

TEST(KinetoOverlap, KernelIssuedLaterButRunningEarlierCountsAsCompute) {
  testing::KinetoTraceBuilder b(0, 2);
  // A 1 GB all-reduce on stream 20; "after" on stream 7 waits for it (event record + stream
  // wait); "meanwhile" on stream 8, issued after "after", runs during the all-reduce.
  b.step(1, 1000, 5000)
      .all_reduce(2.5e8, {0, 1}, 1005, 1010, 4000)
      .runtime_call("cudaEventRecord", 1015, 900)
      .runtime_call("cudaStreamWaitEvent", 1020, 901)
      .kernel("after", 1030, 5020, 100, 7)
      .kernel("meanwhile", 1040, 1050, 1000, 8);
  testing::TempDir dir;
  const std::string path = dir.write("rank0.json", b.text());
  app::TraceReplayRequest request;
  request.trace = path;
  request.traces = {path};
  request.hardware_preset = "dgx-a100";
  request.expected_ranks = 2;
  const app::TraceReplay run = app::replay_trace(request);
  const EventGraph& g = run.trace.graph;
  double after_start = -1, meanwhile_end = -1;
  for (OpId id = 0; id < g.size(); ++id) {
    if (g.op(id).rank != run.report.breakdown.rank) continue;
    if (g.label(g.op(id).label) == "after") after_start = run.result.timing[id].start_s;
    if (g.label(g.op(id).label) == "meanwhile") meanwhile_end = run.result.timing[id].end_s;
  }
  ASSERT_GT(meanwhile_end, 0);
  ASSERT_LT(meanwhile_end, after_start);  // the later-issued kernel ran first
  const analysis::Breakdown& bd = run.report.breakdown;
  EXPECT_NEAR(bd.compute_s, 1100e-6, 1e-9);  // both kernels, each once
  EXPECT_NEAR(bd.total_s(), run.report.step_time_s, 1e-12);
  // Exposed communication: from the end of "meanwhile" until the all-reduce let "after" go.
  EXPECT_NEAR(bd.exposed_comm(CommDim::kOther), after_start - meanwhile_end, 1e-9);
}

}  // namespace
}  // namespace racksim
