// `racksim replay` and `racksim run --emit-chakra` from the command line: reports and files,
// exit code 2 with the file and node for bad traces and options (and no report files), and a
// generated workload that goes out as Chakra files and comes back with the same step time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::read_file;
using testing::run_racksim;
using testing::TempDir;
namespace fs = std::filesystem;

std::string sample(const std::string& path) {
  return std::string(RACKSIM_SOURCE_DIR) + "/tests/data/chakra/" + path;
}

constexpr const char* kScenario = R"(name: "chakra cli"
model { preset: "llama3-8b" num_layers: 4 }
hardware { preset: "dgx-h100" nodes: 1 }
layout { tp: 2 pp: 2 dp: 2 }
training { global_batch_size: 4 micro_batch_size: 1 seq_length: 1024 }
)";

TEST(ChakraCli, ReplayPrintsAndWritesAReport) {
  TempDir dir;
  const fs::path out = dir.path() / "out";
  const auto r =
      run_racksim({"replay", sample("astra-sim_microbench/all_reduce/8npus_1MB/all_reduce"),
                   "--hardware", "dgx-h100", "--nodes", "1", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("step time"), std::string::npos);
  EXPECT_NE(r.out.find("Breakdown of the critical rank"), std::string::npos);
  const auto j = nlohmann::json::parse(read_file(out / "report.json"));
  for (const char* key :
       {"trace", "platform", "ranks", "gpus", "compute", "step_time_s", "breakdown_s", "streams",
        "process_groups", "flops", "trace_nodes", "warnings", "sim"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["ranks"], 8);
  EXPECT_EQ(j["trace_nodes"]["collective"], 8);
  EXPECT_TRUE(fs::exists(out / "timeline.json"));
  EXPECT_TRUE(fs::exists(out / "pipeline.svg"));
  EXPECT_FALSE(nlohmann::json::parse(read_file(out / "timeline.json")).empty());
}

TEST(ChakraCli, RingTopologyFromTheCommandLine) {
  const auto r =
      run_racksim({"replay", sample("astra-sim_microbench/all_reduce/8npus_1MB/all_reduce"),
                   "--topology", "ring", "--link-bytes-per-s", "50e9", "--link-latency-s", "500e-9",
                   "--set", "hardware.collectives.base_latency_s=0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("43.700 us"), std::string::npos) << r.out;
}

struct BadCase {
  std::string name;
  std::vector<std::string> args;
  std::string expected;  // in stderr
};

void PrintTo(const BadCase& c, std::ostream* os) {
  *os << c.name;
}

class BadReplay : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadReplay, ExitsTwoWithNoReport) {
  const BadCase& c = GetParam();
  TempDir dir;
  // A truncated copy of a sample, and a trace with a cycle, made on the spot.
  const std::string good =
      read_file(sample("generated_chakra_generator_equivalent/two_comp_nodes_dependent.0.et"));
  std::ofstream(dir.path() / "cut.0.et", std::ios::binary) << good.substr(0, good.size() - 3);
  std::vector<std::string> args = {"replay"};
  for (const std::string& a : c.args) {
    args.push_back(a == "CUT" ? (dir.path() / "cut").string() : a);
  }
  const fs::path out = dir.path() / "out";
  args.insert(args.end(), {"--out", out.string()});
  const auto r = run_racksim(args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out)) << "no report files on bad input";
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, BadReplay,
    ::testing::Values(
        BadCase{"Truncated",
                {"CUT"},
                "cut.0.et: record 2 (node #2 in file order, at byte 40): announces"},
        BadCase{"NoFiles", {"/nonexistent/trace"}, "no trace files"},
        BadCase{"RankCount",
                {sample("astra-sim_microbench/all_reduce/4npus_1MB/all_reduce"), "--ranks", "8"},
                "4 rank file(s) found but 8 ranks expected"},
        BadCase{"TooFewGpus",
                {sample("astra-sim_microbench/all_reduce/8npus_1MB/all_reduce"), "--hardware",
                 "dgx-h100", "--nodes", "1", "--ring-gpus", "4", "--topology", "ring"},
                "the trace has 8 ranks but the cluster only 4 GPUs"},
        BadCase{
            "UnknownCompute",
            {sample("astra-sim_microbench/all_reduce/4npus_1MB/all_reduce"), "--compute", "guess"},
            "'guess' is not one of recorded, model"},
        BadCase{"BadSet",
                {sample("astra-sim_microbench/all_reduce/4npus_1MB/all_reduce"), "--set",
                 "layout.tp=2"},
                "only hardware.* and sim.fidelity can be set for a replay"},
        BadCase{"BadMapping",
                {sample("astra-sim_microbench/all_reduce/4npus_1MB/all_reduce"), "--mapping",
                 "/nonexistent/mapping"},
                "cannot be opened"}),
    [](const auto& info) { return info.param.name; });

TEST(ChakraCli, MappingFileErrorsNameTheLine) {
  TempDir dir;
  const std::string mapping = dir.write("m.txt", "0\n1\n1\n3\n");
  const auto r =
      run_racksim({"replay", sample("astra-sim_microbench/all_reduce/4npus_1MB/all_reduce"),
                   "--mapping", mapping});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(mapping + ":3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPU 1 is given to ranks 1 and 2"), std::string::npos) << r.err;
}

TEST(ChakraCli, WarningsGoToStderr) {
  const auto r = run_racksim({"replay", sample("chakra_small_json_feeder_sample")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("racksim: warning:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("node 435: collective without 'comm_size'"), std::string::npos) << r.err;
}

double step_time(const fs::path& report) {
  return nlohmann::json::parse(read_file(report))["step_time_s"].get<double>();
}

// The generated step written as Chakra files and replayed on the same hardware is the same
// simulation: the same step time.
TEST(ChakraCli, EmittedTraceReplaysToTheSameStepTime) {
  TempDir dir;
  const std::string scenario = dir.write("s.textproto", kScenario);
  const fs::path chakra = dir.path() / "chakra";
  // The roofline on both sides: a Chakra trace carries no GEMM shapes, so a replay that models
  // kernels (rather than reading their recorded durations) cannot time them as the kernel model
  // did.
  const auto run =
      run_racksim({"run", scenario, "--emit-chakra", chakra.string(), "--out",
                   (dir.path() / "run").string(), "--set", "hardware.compute.model=ROOFLINE"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (int r = 0; r < 8; ++r)
    EXPECT_TRUE(fs::exists(chakra / ("trace." + std::to_string(r) + ".et")));
  EXPECT_TRUE(fs::exists(chakra / "trace.comm_groups.json"));
  EXPECT_FALSE(nlohmann::json::parse(read_file(chakra / "trace.comm_groups.json")).empty());
  const auto replay = run_racksim({"replay", (chakra / "trace").string(), "--hardware", "dgx-h100",
                                   "--nodes", "1", "--out", (dir.path() / "replay").string(),
                                   "--set", "hardware.compute.model=ROOFLINE"});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(replay.err.find("warning"), std::string::npos) << replay.err;
  EXPECT_DOUBLE_EQ(step_time(dir.path() / "replay" / "report.json"),
                   step_time(dir.path() / "run" / "report.json"));
}

TEST(ChakraCli, EmitChakraRefusesSomeoneElsesDirectory) {
  TempDir dir;
  dir.write("mine.txt", "keep me");
  const auto r = run_racksim({"run", "--emit-chakra", dir.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(read_file(dir.path() / "mine.txt"), "keep me");
}

}  // namespace
}  // namespace racksim
