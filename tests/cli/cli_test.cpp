// The command line's promises: a report from the default scenario, exit code 2 with file:line
// and field for bad input (and no report files), identical reports for identical input, and
// nothing of the user's overwritten.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <regex>

#include "tests/support/run_racksim.h"
#include "tests/support/test_scenarios.h"

namespace racksim {
namespace {

using testing::read_file;
using testing::read_gzip_file;
using testing::run_racksim;
using testing::TempDir;
namespace fs = std::filesystem;

// A small valid scenario; each bad-input case breaks one line of it.
constexpr const char* kScenario = testing::kSmallDense;

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

TEST(Cli, DefaultScenarioPrintsAReport) {
  const auto r = run_racksim({"run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("step time"), std::string::npos);
  EXPECT_NE(r.out.find("MFU A (model)"), std::string::npos);
  EXPECT_NE(r.out.find("Breakdown of the critical rank"), std::string::npos);
}

struct BadInput {
  std::string name;
  std::string from;
  std::string to;
  int line;
  std::string field;
  std::string from2 = "";  // an optional second edit
  std::string to2 = "";
};

void PrintTo(const BadInput& c, std::ostream* os) {
  *os << c.name;
}

class BadScenario : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadScenario, ExitsTwoNamingFileLineAndField) {
  const BadInput c = GetParam();
  TempDir dir;
  std::string text = replace(kScenario, c.from, c.to);
  if (!c.from2.empty()) text = replace(text, c.from2, c.to2);
  const std::string path = dir.write("bad.textproto", text);
  const fs::path out = dir.path() / "out";
  const auto r = run_racksim({"run", path, "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(path + ":" + std::to_string(c.line)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(c.field), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out)) << "no report files on bad input";
  EXPECT_EQ(r.out.find("step time"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, BadScenario,
    ::testing::Values(
        BadInput{"UnknownField", "seq_length: 2048", "seq_lenght: 2048", 8, "seq_lenght"},
        BadInput{"WrongType", "micro_batch_size: 1", "micro_batch_size: \"one\"", 7,
                 "micro_batch_size"},
        BadInput{"ProductNotGpus", "dp: 2 }", "dp: 3 }", 4, "layout.dp"},
        BadInput{"HeadsNotDivisibleByTp", "tp: 2 pp: 2 dp: 2", "tp: 4 pp: 2 dp: 1", 4, "layout.tp",
                 "num_layers: 8", "num_layers: 8 num_heads: 6 num_kv_heads: 6 head_dim: 128"},
        BadInput{"LayersNotDivisibleByPp", "num_layers: 8", "num_layers: 9", 4, "layout.pp"},
        BadInput{"BatchNotDivisible", "global_batch_size: 8", "global_batch_size: 9", 6,
                 "training.global_batch_size"}),
    [](const auto& info) { return info.param.name; });

TEST(Cli, BadOverrideExitsTwo) {
  const auto r = run_racksim({"run", "--set", "layout.tpp=2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--set"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tpp"), std::string::npos) << r.err;
}

TEST(Cli, MissingScenarioFileExitsTwo) {
  const auto r = run_racksim({"run", "/nonexistent/scenario.textproto"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/scenario.textproto"), std::string::npos) << r.err;
}

TEST(Cli, JsonScenarioErrorsNameTheLine) {
  TempDir dir;
  const std::string path = dir.write("bad.json", R"({
  "model": {"preset": "llama3-8b"},
  "layout": {
    "tp": 2,
    "ppp": 4
  }
})");
  const auto r = run_racksim({"run", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(path + ":5"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ppp"), std::string::npos) << r.err;
}

nlohmann::json report_without_wall_clock(const fs::path& dir) {
  auto j = nlohmann::json::parse(read_file(dir / "report.json"));
  j["sim"].erase("wall_s");
  return j;
}

TEST(Cli, SameInputGivesIdenticalReports) {
  TempDir dir;
  const std::string path = dir.write("s.textproto", kScenario);
  const auto a = run_racksim({"run", path, "--out", (dir.path() / "a").string()});
  const auto b = run_racksim({"run", path, "--out", (dir.path() / "b").string()});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(report_without_wall_clock(dir.path() / "a"),
            report_without_wall_clock(dir.path() / "b"));
  EXPECT_EQ(read_file(dir.path() / "a" / "timeline.json.gz"),
            read_file(dir.path() / "b" / "timeline.json.gz"));
}

TEST(Cli, ReportHasTheStableKeysAndTheBreakdownAddsUp) {
  TempDir dir;
  const auto r = run_racksim({"run", "--out", (dir.path() / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(dir.path() / "out" / "report.json"));
  for (const char* key : {"step_time_s", "tokens_per_step", "tokens_per_s", "ms_per_1k_tokens"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"model", "hardware", "peak_flops_per_gpu", "flops_per_token"}) {
    EXPECT_TRUE(j["mfu"].contains(key)) << key;
  }
  const auto& b = j["breakdown_s"];
  double total = 0;
  for (const char* key : {"compute", "recompute", "bubble", "other", "optimizer", "offload"}) {
    ASSERT_TRUE(b.contains(key)) << key;
    total += b[key].get<double>();
  }
  for (const char* dim : {"tp", "cp", "ep", "pp", "dp"}) {
    ASSERT_TRUE(b["exposed_comm"].contains(dim)) << dim;
    total += b["exposed_comm"][dim].get<double>();
  }
  const double step = j["step_time_s"].get<double>();
  EXPECT_NEAR(total, step, 1e-3 * step);
  EXPECT_TRUE(j["sim"].contains("events"));
  EXPECT_TRUE(j["sim"].contains("wall_s"));
  // Routes are computed for the pairs that communicate, not for all pairs: 16 GPUs, 240 pairs.
  EXPECT_EQ(j["sim"]["gpu_pairs"].get<int>(), 16 * 15);
  EXPECT_GT(j["sim"]["routes_computed"].get<int>(), 0);
  EXPECT_LT(j["sim"]["routes_computed"].get<int>(), 16 * 15 / 2);
  // The timeline is Chrome trace-event JSON.
  const auto timeline =
      nlohmann::json::parse(read_gzip_file(dir.path() / "out" / "timeline.json.gz"));
  EXPECT_GT(timeline["traceEvents"].size(), 100u);
}

TEST(Cli, NeverWritesIntoSomeoneElsesDirectory) {
  TempDir dir;
  const std::string mine = dir.write("notes.txt", "my notes");
  const auto r = run_racksim({"run", "--out", dir.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(read_file(mine), "my notes");
  EXPECT_FALSE(fs::exists(dir.path() / "report.json"));
}

TEST(Cli, RewritesItsOwnOutputDirectory) {
  TempDir dir;
  const auto out = (dir.path() / "out").string();
  ASSERT_EQ(run_racksim({"run", "--out", out}).exit_code, 0);
  EXPECT_EQ(run_racksim({"run", "--out", out}).exit_code, 0);
}

TEST(Cli, CollectivePrintsOneRowPerSize) {
  const auto r =
      run_racksim({"collective", "--hardware", "dgx-h100", "--nodes", "1", "--op", "all_reduce",
                   "--ranks", "8", "--min-bytes", "1M", "--max-bytes", "8M", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 4u);  // 1, 2, 4, 8 MiB
  EXPECT_DOUBLE_EQ(j["rows"][0]["bytes"].get<double>(), 1 << 20);
  const auto& last = j["rows"][3];
  // busbw = algbw x 2(n-1)/n
  EXPECT_NEAR(last["busbw_gb_per_s"].get<double>(), last["algbw_gb_per_s"].get<double>() * 14 / 8,
              1e-9);
}

TEST(Cli, CollectiveBadOptionsExitTwo) {
  EXPECT_EQ(run_racksim({"collective", "--hardware", "dgx-h100", "--op", "all_shuffle"}).exit_code,
            2);
  EXPECT_EQ(run_racksim({"collective", "--hardware", "nope"}).exit_code, 2);
  EXPECT_EQ(run_racksim({"collective", "--hardware", "dgx-h100", "--ranks", "9"}).exit_code, 2);
  EXPECT_EQ(run_racksim({"collective", "--hardware", "dgx-h100", "--min-bytes", "x"}).exit_code, 2);
  EXPECT_EQ(run_racksim({"run", "--bogus-option"}).exit_code, 2);
  // A stray word is an error on the commands without a positional argument too, not ignored.
  EXPECT_EQ(run_racksim({"collective", "--hardware", "dgx-h100", "stray"}).exit_code, 2);
  EXPECT_EQ(run_racksim({"calibrate", "stray"}).exit_code, 2);
  EXPECT_EQ(run_racksim({"frobnicate"}).exit_code, 2);
}

// `presets --json` is the machine-readable form of the listing (scripts/validate.py reads a
// preset's power-limit ratio from it): the same presets, the same values, scenario field names.
TEST(Cli, PresetsJsonListsWhatTheTextListsWithTheScenarioFieldNames) {
  const auto text = run_racksim({"presets"});
  const auto json = run_racksim({"presets", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  for (const char* kind : {"models", "hardware", "frameworks"}) {
    ASSERT_TRUE(j.contains(kind)) << kind;
    for (const auto& [name, fields] : j[kind].items()) {
      EXPECT_NE(text.out.find("  " + name + " "), std::string::npos) << kind << " " << name;
    }
  }
  EXPECT_EQ(j["hardware"].size(), 11u);
  const auto& a100 = j["hardware"]["dgx-a100"];
  EXPECT_EQ(a100["gpu"]["name"], "A100-80GB-SXM4");
  const double ratio = a100["compute"]["sustained_clock_ratio"].get<double>();
  EXPECT_NE(text.out.find(fmt::format("FLOP-bound kernels at {} of their", ratio)),
            std::string::npos);
  EXPECT_EQ(j["models"]["llama3-70b"]["num_layers"], 80);
  EXPECT_EQ(run_racksim({"presets", "stray"}).exit_code, 2);
  EXPECT_EQ(run_racksim({"presets", "--jsn"}).exit_code, 2);
}

}  // namespace
}  // namespace racksim
