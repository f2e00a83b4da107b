// `racksim replay` options a user expects: GPUs behind one switch (against the ring
// all-reduce's algebra), `--set sim.fidelity`, and output selection (--report-only,
// --no-timeline).
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::run_racksim;
using testing::TempDir;
namespace fs = std::filesystem;

const std::string kAllReduce = std::string(RACKSIM_SOURCE_DIR) +
                               "/tests/data/chakra/astra-sim_microbench/all_reduce/8npus_1MB/"
                               "all_reduce";

std::vector<std::string> switch_replay(std::vector<std::string> more) {
  std::vector<std::string> args{"replay",
                                kAllReduce,
                                "--topology",
                                "switch",
                                "--link-bytes-per-s",
                                "50e9",
                                "--link-latency-s",
                                "500e-9",
                                "--set",
                                "hardware.collectives.base_latency_s=0"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// A ring all-reduce of S = 1 MiB over n = 8 GPUs behind one switch: each GPU's link carries
// 2 (n - 1) / n x S at 50 GB/s (36.700 us), and each of the 2 (n - 1) = 14 steps crosses two
// links of 500 ns (14 us): 50.700 us.
TEST(ReplayOptions, SwitchTopologyMatchesTheRingAlgebra) {
  const auto r = run_racksim(switch_replay({}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("8 GPUs behind one switch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step time            50.700 us"), std::string::npos) << r.out;
}

TEST(ReplayOptions, SetSimFidelityAsForRun) {
  const auto r = run_racksim(switch_replay({"--set", "sim.fidelity=ANALYTIC"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fidelity ANALYTIC"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("50.700 us"), std::string::npos) << r.out;
  const auto bad = run_racksim(switch_replay({"--set", "sim.fold_replicas=true"}));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("sim.fidelity only"), std::string::npos) << bad.err;
}

TEST(ReplayOptions, ReportOnlyAndNoTimeline) {
  TempDir dir;
  const fs::path only = dir.path() / "only", lean = dir.path() / "lean";
  ASSERT_EQ(run_racksim(switch_replay({"--out", only.string(), "--report-only"})).exit_code, 0);
  EXPECT_TRUE(fs::exists(only / "report.json"));
  EXPECT_FALSE(fs::exists(only / "timeline.json"));
  EXPECT_FALSE(fs::exists(only / "pipeline.svg"));
  ASSERT_EQ(run_racksim(switch_replay({"--out", lean.string(), "--no-timeline"})).exit_code, 0);
  EXPECT_TRUE(fs::exists(lean / "report.json"));
  EXPECT_FALSE(fs::exists(lean / "timeline.json"));
  EXPECT_TRUE(fs::exists(lean / "pipeline.svg"));
}

}  // namespace
}  // namespace racksim
