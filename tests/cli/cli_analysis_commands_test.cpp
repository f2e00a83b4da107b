// The analysis commands end to end: `racksim run --out` writes pipeline.svg and a report with
// the critical path and the busiest links; `racksim sweep` lists every grid point (invalid
// layouts with the validation message, points that do not fit with the culprit) and writes a
// ranked CSV; `--emit-jobs` writes one command per point; `racksim compare` shows absolute and
// relative differences.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::read_file;
using testing::run_racksim;
using testing::TempDir;
namespace fs = std::filesystem;

constexpr const char* kScenario = R"(name: "analysis commands"
model { preset: "llama3-8b" num_layers: 4 }
hardware { preset: "dgx-h100" nodes: 1 }
layout { tp: 2 pp: 2 }
training { global_batch_size: 8 micro_batch_size: 1 seq_length: 2048 }
)";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

TEST(RunOutputs, PipelineSvgCriticalPathAndLinks) {
  TempDir dir;
  const std::string scenario = dir.write("s.textproto", kScenario);
  const auto r =
      run_racksim({"run", scenario, "--out", (dir.path() / "out").string(), "--timeline", "full"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string svg = read_file(dir.path() / "out" / "pipeline.svg");
  size_t rows = 0;
  for (size_t at = svg.find("class=\"rank-row\""); at != std::string::npos;
       at = svg.find("class=\"rank-row\"", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 8u);
  const auto report = nlohmann::json::parse(read_file(dir.path() / "out" / "report.json"));
  const auto& path = report.at("critical_path");
  double total = 0;
  for (const auto& [kind, s] : path.at("by_kind_s").items()) total += s.get<double>();
  for (const auto& [dim, s] : path.at("comm_s").items()) total += s.get<double>();
  EXPECT_NEAR(total, report.at("step_time_s").get<double>(), 1e-9 + 1e-6 * total)
      << "the path tiles the step";
  ASSERT_FALSE(report.at("links").at("top").empty());
  const auto& top = report.at("links").at("top")[0];
  EXPECT_GT(top.at("busy_fraction").get<double>(), 0);
  EXPECT_LE(top.at("busy_fraction").get<double>(), 1);
  EXPECT_GT(top.at("bytes").get<double>(), 0);
  const auto timeline =
      nlohmann::json::parse(testing::read_gzip_file(dir.path() / "out" / "timeline.json.gz"));
  size_t starts = 0, finishes = 0;
  for (const auto& e : timeline.at("traceEvents")) {
    starts += e.at("ph") == "s";
    finishes += e.at("ph") == "f";
  }
  EXPECT_GT(starts, 0u);
  EXPECT_EQ(starts, finishes);
  EXPECT_NE(r.out.find("Critical path"), std::string::npos);
  EXPECT_NE(r.out.find("Busiest links"), std::string::npos);
}

TEST(Sweep, GridInvalidLayoutsNotFittingAndCsv) {
  TempDir dir;
  const std::string scenario = dir.write("s.textproto", kScenario);
  const fs::path out = dir.path() / "sweep";
  // tp 3 does not divide 8 GPUs; a 40-layer 8B model at tp 1 pp 1 with long sequences does not
  // fit 80 GB.
  const auto r = run_racksim({"sweep", scenario, "--set", "layout.tp=1,2,3", "--set",
                              "layout.pp=1,2", "--set", "model.num_layers=4,40", "--set",
                              "training.seq_length=8192", "--jobs", "2", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto csv = lines(read_file(out / "sweep.csv"));
  ASSERT_EQ(csv.size(), 1u + 12u) << "a header and one row per point of 3 x 2 x 2";
  EXPECT_EQ(csv[0].rfind("rank,point,layout.tp,layout.pp,model.num_layers,status,step_time_s,"
                         "tokens_per_s_per_gpu,",
                         0),
            0u)
      << csv[0];
  size_t ok = 0, invalid = 0, too_big = 0;
  for (size_t i = 1; i < csv.size(); ++i) {
    if (csv[i].find(",ok,") != std::string::npos) ++ok;
    if (csv[i].find(",invalid,") != std::string::npos) {
      ++invalid;
      EXPECT_NE(csv[i].find("does not divide"), std::string::npos) << csv[i];
    }
    if (csv[i].find(",does_not_fit,") != std::string::npos) {
      ++too_big;
      EXPECT_NE(csv[i].find("largest:"), std::string::npos) << csv[i];
    }
  }
  EXPECT_EQ(invalid, 4u) << "tp 3 with every pp and layer count";
  EXPECT_GE(too_big, 1u);
  EXPECT_EQ(ok + invalid + too_big, 12u);
  EXPECT_EQ(csv[1].rfind("1,", 0), 0u) << "ranked: the best point first";
  EXPECT_TRUE(fs::exists(out / "points"));
  EXPECT_NE(r.out.find("not simulated:"), std::string::npos);
}

// Megatron-Core layout strings hold commas, so a sweep over them separates the layouts with ';'
// and keeps each string whole.
TEST(Sweep, PipelineLayoutsAreSeparatedBySemicolons) {
  TempDir dir;
  const std::string scenario = dir.write("s.textproto", kScenario);
  const fs::path out = dir.path() / "sweep";
  const auto r = run_racksim({"sweep", scenario, "--set", "layout.tp=2", "--set", "layout.pp=2",
                              "--set", "model.num_layers=4", "--set",
                              "layout.pipeline_layout=Et,t|t*2L;Et|t*3L", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto csv = lines(read_file(out / "sweep.csv"));
  ASSERT_EQ(csv.size(), 1u + 2u) << "a header and the two layouts";
  size_t ok = 0;
  for (size_t i = 1; i < csv.size(); ++i) ok += csv[i].find(",ok,") != std::string::npos;
  EXPECT_EQ(ok, 2u) << r.out;
}

TEST(Sweep, EmitJobsWritesOneCommandPerPoint) {
  TempDir dir;
  const std::string scenario = dir.write("s.textproto", kScenario);
  const fs::path jobs = dir.path() / "jobs.txt";
  const auto r =
      run_racksim({"sweep", scenario, "--set", "layout.tp=1,2,4", "--set", "layout.pp=1,2",
                   "--emit-jobs", jobs.string(), "--out", (dir.path() / "o").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto commands = lines(read_file(jobs));
  EXPECT_EQ(commands.size(), 6u);
  for (const auto& c : commands) {
    EXPECT_NE(c.find(" run "), std::string::npos) << c;
    EXPECT_NE(c.find("--set layout.tp="), std::string::npos) << c;
    EXPECT_NE(c.find("--out "), std::string::npos) << c;
  }
  const auto again =
      run_racksim({"sweep", scenario, "--set", "layout.tp=1,2", "--emit-jobs", jobs.string()});
  EXPECT_EQ(again.exit_code, 2) << "an existing file is never overwritten";
}

TEST(Compare, AbsoluteAndRelativeDifferences) {
  TempDir dir;
  const std::string a =
      dir.write("a.json",
                R"({"step_time_s": 2.0, "mfu": {"model": 0.4}, "breakdown_s": {"bubble": 0.5},
          "memory": {"static": [{"name": "weights", "bytes": 100}]}, "sim": {"wall_s": 3}})");
  const std::string b =
      dir.write("b.json",
                R"({"step_time_s": 1.5, "mfu": {"model": 0.5}, "breakdown_s": {"bubble": 0.5},
          "memory": {"static": [{"name": "weights", "bytes": 50}]}, "sim": {"wall_s": 9}})");
  const auto r = run_racksim({"compare", a, b});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("step_time_s"), std::string::npos);
  EXPECT_NE(r.out.find("-0.5"), std::string::npos);
  EXPECT_NE(r.out.find("-25.0%"), std::string::npos);
  EXPECT_NE(r.out.find("+25.0%"), std::string::npos) << "MFU 0.4 -> 0.5";
  EXPECT_NE(r.out.find("memory.static[weights].bytes"), std::string::npos);
  EXPECT_EQ(r.out.find("wall_s"), std::string::npos) << "run-to-run noise is left out";
  const auto changed = run_racksim({"compare", a, b, "--changed"});
  EXPECT_EQ(changed.out.find("breakdown_s.bubble"), std::string::npos);
  EXPECT_EQ(run_racksim({"compare", a}).exit_code, 2);
}

}  // namespace
}  // namespace racksim
