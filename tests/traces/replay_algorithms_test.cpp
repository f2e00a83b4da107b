// The replay report names the collective algorithm each kind ran (issue 18: NVLS ran silently
// on the default preset), and attributes exposed communication of collectives without a
// process-group name to their group of ranks. One simulation per test (SimGrid).
#include <gtest/gtest.h>

#include <string>

#include "analysis/algorithm_table.h"
#include "app/trace_replay.h"
#include "graph/group_label.h"

namespace racksim {
namespace {

app::TraceReplayRequest all_reduce_8(app::TraceTopology topology) {
  app::TraceReplayRequest r;
  r.trace = std::string(RACKSIM_SOURCE_DIR) +
            "/tests/data/chakra/astra-sim_microbench/all_reduce/8npus_1MB/all_reduce";
  r.hardware_preset = "dgx-h100";
  r.nodes = 1;
  r.topology = topology;
  return r;
}

// Eight ranks inside one DGX H100 (NVSwitch with NVLink SHARP): AUTO runs NVLS.
TEST(ReplayAlgorithms, OneDgxH100AllReduceRunsNvls) {
  const app::TraceReplay run = app::replay_trace(all_reduce_8(app::TraceTopology::kCluster));
  ASSERT_EQ(run.report.algorithms.size(), 1u);
  const sim::AlgorithmUse& use = run.report.algorithms[0];
  EXPECT_EQ(use.kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(use.algorithm, sim::Algorithm::kNvls);
  EXPECT_EQ(use.collectives, 1u);  // one collective, not one per member
  EXPECT_EQ(use.max_members, 8u);
  const std::string text = analysis::trace_report_text(run.report);
  EXPECT_NE(text.find("Collective algorithms (per kind, as run):\n"
                      "  all_reduce      nvls on other (1 x, 8 ranks)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(analysis::trace_report_json(run.report)["collective_algorithms"][0]["algorithm"],
            "nvls");
}

// The same trace with the algorithm forced to rings: the report says ring.
TEST(ReplayAlgorithms, RequestedRingIsReported) {
  auto request = all_reduce_8(app::TraceTopology::kCluster);
  request.overrides = {"hardware.collectives.algorithm=RING"};
  const app::TraceReplay run = app::replay_trace(request);
  ASSERT_EQ(run.report.algorithms.size(), 1u);
  EXPECT_EQ(run.report.algorithms[0].algorithm, sim::Algorithm::kRing);
}

// No pg_name: the group is every rank, named by its ranks, and the exposed communication the
// breakdown charges to "other" is all this group's.
TEST(ReplayAlgorithms, UnnamedGroupIsNamedByItsRanksAndCarriesTheExposure) {
  const app::TraceReplay run = app::replay_trace(all_reduce_8(app::TraceTopology::kRing));
  ASSERT_EQ(run.report.groups.size(), 1u);
  EXPECT_EQ(run.report.groups[0].name, "group[8 ranks: 0,1,..,7]");
  const double other = run.report.breakdown.exposed_comm(CommDim::kOther);
  EXPECT_GT(other, 0);
  EXPECT_DOUBLE_EQ(run.report.group_exposed_s[0], other);
  const std::string text = analysis::trace_report_text(run.report);
  EXPECT_NE(text.find("    group[8 ranks: 0,1,..,7]"), std::string::npos) << text;
  EXPECT_EQ(analysis::trace_report_json(run.report)["process_groups"][0]["exposed_s"], other);
}

TEST(GroupLabel, NamesRanksByStride) {
  EXPECT_EQ(group_label({0, 1, 2, 3, 4, 5, 6, 7}), "group[8 ranks: 0,1,..,7]");
  EXPECT_EQ(group_label({3, 11, 19, 27, 35}), "group[5 ranks: 3,11,..,35]");
  EXPECT_EQ(group_label({0, 4, 9}), "group[3 ranks: 0,4,9]");
  EXPECT_EQ(group_label({5}), "group[1 rank: 5]");
  EXPECT_EQ(group_label({0, 1, 5, 6, 12}), "group[5 ranks: 0,1,5,..,12, irregular]");
}

TEST(AlgorithmTable, OneLinePerKind) {
  const std::vector<sim::AlgorithmUse> uses = {
      {CollectiveKind::kAllReduce, CommDim::kTp, sim::Algorithm::kNvls, 1088, 4},
      {CollectiveKind::kAllReduce, CommDim::kDp, sim::Algorithm::kRing, 32, 2},
      {CollectiveKind::kAllToAll, CommDim::kEp, sim::Algorithm::kDirect, 8, 16}};
  EXPECT_EQ(analysis::algorithms_text(uses),
            "\nCollective algorithms (per kind, as run):\n"
            "  all_reduce      nvls on tp (1088 x, 4 ranks); ring on dp (32 x, 2 ranks)\n"
            "  all_to_all      direct on ep (8 x, 16 ranks)\n");
  EXPECT_EQ(analysis::algorithms_text({}), "");
  EXPECT_EQ(analysis::algorithms_json(uses)[1]["dim"], "dp");
}

}  // namespace
}  // namespace racksim
