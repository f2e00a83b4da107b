// `racksim replay` of Kineto traces from the command line: the report says the replication
// loudly and carries the recorded-vs-simulated comparison; bad traces exit 2 naming the file,
// event and field, and write nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "tests/support/kineto_trace.h"
#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::KinetoTraceBuilder;
using testing::read_file;
using testing::run_racksim;
using testing::TempDir;
namespace fs = std::filesystem;

std::string sample(const std::string& name) {
  return std::string(RACKSIM_SOURCE_DIR) + "/tests/data/kineto/" + name;
}

TEST(KinetoCli, ReplicatedReplayReportsTheComparison) {
  TempDir dir;
  const fs::path out = dir.path() / "out";
  const auto r =
      run_racksim({"replay", sample("hta-nccl-2ranks-rank0.json.gz"), "--ranks", "2", "--hardware",
                   "dgx-a100", "--step", "5", "--fidelity", "ANALYTIC", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("REPLICATED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ProfilerStep#5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recorded busy"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(read_file(out / "report.json"));
  ASSERT_TRUE(j.contains("kineto"));
  EXPECT_EQ(j["kineto"]["step"], "ProfilerStep#5");
  EXPECT_EQ(j["kineto"]["replicated"], true);
  EXPECT_GT(j["kineto"]["ranks"][0]["recorded_step_time_s"].get<double>(), 0.2);
}

TEST(KinetoCli, DirectoryOfRanksReplays) {
  TempDir dir;
  for (int rank = 0; rank < 2; ++rank) {
    KinetoTraceBuilder b(rank, 2);
    b.step(3, 1000, 500).kernel("gemm", 1010, 1020, 100).all_reduce(1e6, {0, 1}, 1100, 1130, 50);
    dir.write("trace_rank" + std::to_string(rank) + ".json", b.text());
  }
  const auto r = run_racksim({"replay", dir.path().string(), "--hardware", "dgx-a100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 rank(s)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("REPLICATED"), std::string::npos) << r.out;
}

TEST(KinetoCli, KernelWithoutStreamExitsTwoWithoutOutput) {
  TempDir dir;
  auto j = KinetoTraceBuilder(0, 1).step(1, 1000, 500).kernel("gemm", 1010, 1020, 100).document();
  j["traceEvents"][2]["args"].erase("stream");
  const std::string trace = dir.write("bad.json", j.dump());
  const fs::path out = dir.path() / "out";
  const auto r = run_racksim({"replay", trace, "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("traceEvents[2].args.stream"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "report.json"));
}

TEST(KinetoCli, StepIsForKinetoOnly) {
  const auto r = run_racksim(
      {"replay",
       std::string(RACKSIM_SOURCE_DIR) + "/tests/data/chakra/chakra_pytorch_converted_rank0.et",
       "--step", "3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--step"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace racksim
