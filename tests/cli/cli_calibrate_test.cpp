// `racksim calibrate` recovers known parameters: "measured" step times are simulated with
// known GEMM and attention efficiencies, the fit starts from the preset's and must land on the
// known ones; a fit with as many parameters as points is flagged; the calibration file it
// writes is included by a scenario and reproduces the fitted step time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include "common/csv.h"
#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::read_file;
using testing::run_racksim;
using testing::simulated_step_s;
using testing::TempDir;
namespace fs = std::filesystem;

// One GPU, two layers: each run takes a fraction of a second.
constexpr const char* kBase = R"(name: "calibration test"
model { preset: "llama3-8b" num_layers: 2 vocab_size: 1024 }
hardware { preset: "dgx-h100" nodes: 1 gpus_per_node: 1 host { sockets: 1 } }
layout { tp: 1 pp: 1 }
training { global_batch_size: 1 micro_batch_size: 1 seq_length: 2048 recompute: NONE }
)";

constexpr double kGemm = 0.55;
constexpr double kAttention = 0.35;

double simulated_step(const std::string& base, int seq) {
  return simulated_step_s(base, {"training.seq_length=" + std::to_string(seq),
                                 "hardware.compute.gemm=" + std::to_string(kGemm),
                                 "hardware.compute.attention=" + std::to_string(kAttention)});
}

std::string measured_csv(const std::string& base, const std::vector<int>& seqs) {
  std::string csv =
      "# synthetic: simulated with known efficiencies\ntraining.seq_length,measured_step_time_s\n";
  for (int s : seqs)
    csv += std::to_string(s) + "," + std::to_string(simulated_step(base, s)) + "\n";
  return csv;
}

double fitted(const std::string& out, const std::string& name) {
  std::smatch m;
  const std::regex re(name + R"(\s+([0-9.]+))");
  EXPECT_TRUE(std::regex_search(out, m, re)) << out;
  return m.size() > 1 ? std::stod(m[1]) : 0;
}

TEST(Calibrate, RecoversKnownParametersAndWritesAnIncludableFile) {
  TempDir dir;
  const std::string base = dir.write("base.textproto", kBase);
  const std::string csv = dir.write("measured.csv", measured_csv(base, {1024, 4096, 16384, 32768}));
  const std::string cal = (dir.path() / "cal.textproto").string();
  const auto r = run_racksim({"calibrate", "--base", base, "--measured", csv, "--params",
                              "hardware.compute.gemm,hardware.compute.attention", "--holdout",
                              "none", "--max-evals", "40", "--jobs", "2", "--out", cal});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NEAR(fitted(r.out, "hardware.compute.gemm"), kGemm, 0.01) << r.out;
  EXPECT_NEAR(fitted(r.out, "hardware.compute.attention"), kAttention, 0.01) << r.out;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << "4 points, 2 parameters";
  // The file is included by a scenario and gives the "measured" time back.
  const std::string text = read_file(cal);
  EXPECT_EQ(text.rfind("# racksim calibration", 0), 0u);
  EXPECT_NE(text.find("gemm:"), std::string::npos);
  const std::string with =
      dir.write("with.textproto", std::string(kBase) + "calibration: \"cal.textproto\"\n");
  TempDir out;
  const auto run = run_racksim({"run", with, "--set", "training.seq_length=4096", "--report-only",
                                "--out", (out.path() / "o").string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const double step = nlohmann::json::parse(read_file(out.path() / "o" / "report.json"))
                          .at("step_time_s")
                          .get<double>();
  EXPECT_NEAR(step / simulated_step(base, 4096), 1, 0.01);
}

TEST(Calibrate, FlagsAsManyParametersAsPoints) {
  TempDir dir;
  const std::string base = dir.write("base.textproto", kBase);
  const std::string csv = dir.write("measured.csv", measured_csv(base, {2048, 16384}));
  const auto r = run_racksim({"calibrate", "--base", base, "--measured", csv, "--params",
                              "hardware.compute.gemm,hardware.compute.attention", "--max-evals",
                              "8", "--holdout-max-evals", "4", "--jobs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: 2 parameters for 2 measured points"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("held out (leave one out)"), std::string::npos) << r.out;
}

// --fit-every 2 fits on rows 0 and 2 only and predicts all four: the two it did not see come out
// right (the synthetic rows are exact for the known values) and are reported apart.
TEST(Calibrate, FitsEveryNthRowAndPredictsTheOthers) {
  TempDir dir;
  const std::string base = dir.write("base.textproto", kBase);
  const std::string csv = dir.write("measured.csv", measured_csv(base, {1024, 4096, 16384, 32768}));
  const auto r = run_racksim({"calibrate", "--base", base, "--measured", csv, "--params",
                              "hardware.compute.gemm,hardware.compute.attention", "--holdout",
                              "none", "--fit-every", "2", "--max-evals", "40", "--jobs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NEAR(fitted(r.out, "hardware.compute.gemm"), kGemm, 0.01) << r.out;
  std::smatch m;
  const std::regex in_sample(
      R"(in sample \(fitted points\)\s+mean \|error\|\s+[0-9.]+ %.*\((\d+) points\))");
  ASSERT_TRUE(std::regex_search(r.out, m, in_sample)) << r.out;
  EXPECT_EQ(m[1], "2");
  const std::regex others(
      R"(not fitted \(1 row in 2 fitted\)\s+mean \|error\|\s+([0-9.]+) %.*\((\d+) points\))");
  ASSERT_TRUE(std::regex_search(r.out, m, others)) << r.out;
  EXPECT_LT(std::stod(m[1]), 1.0) << r.out;
  EXPECT_EQ(m[2], "2");
}

// --json writes what the text reports, as numbers: the fitted values, the errors as fractions,
// every row's measured, fitted and held-out times; a second run replaces the file racksim wrote,
// and a file the user wrote at that path stops the command before it simulates anything.
TEST(Calibrate, JsonReportHoldsWhatTheTextSays) {
  TempDir dir;
  const std::string base = dir.write("base.textproto", kBase);
  const std::string csv = dir.write("measured.csv", measured_csv(base, {1024, 4096, 16384}));
  const std::string json = (dir.path() / "fit.json").string();
  const std::vector<std::string> args = {"calibrate",
                                         "--base",
                                         base,
                                         "--measured",
                                         csv,
                                         "--params",
                                         "hardware.compute.gemm",
                                         "--holdout",
                                         "loo",
                                         "--max-evals",
                                         "6",
                                         "--holdout-max-evals",
                                         "3",
                                         "--jobs",
                                         "2",
                                         "--json",
                                         json};
  for (int run = 0; run < 2; ++run) {  // the second replaces the first's file
    const auto r = run_racksim(args);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto doc = nlohmann::ordered_json::parse(read_file(json));
    EXPECT_EQ(doc.begin().key(), "written_by");  // what lets a later run replace the file
    EXPECT_EQ(doc.at("points"), 3);
    const auto& p = doc.at("parameters").at(0);
    EXPECT_EQ(p.at("field"), "hardware.compute.gemm");
    EXPECT_NEAR(p.at("fitted").get<double>(), fitted(r.out, "hardware.compute.gemm"), 5e-4);
    const double in_sample = doc.at("errors").at("in_sample").at("mean_abs_relative");
    EXPECT_NE(r.out.find(fmt::format("in sample (fitted points)      mean |error| {:>6.2f} %",
                                     100 * in_sample)),
              std::string::npos)
        << r.out;
    EXPECT_EQ(doc.at("held_out_folds").size(), 3u);  // leave one out: a fold per row
    ASSERT_EQ(doc.at("rows").size(), 3u);
    for (const auto& row : doc.at("rows")) {
      const double measured = row.at("measured_step_time_s");
      EXPECT_NEAR(row.at("fitted_error").get<double>(),
                  row.at("fitted_step_time_s").get<double>() / measured - 1, 1e-12);
      EXPECT_TRUE(row.contains("held_out_step_time_s"));
      EXPECT_EQ(row.at("closest_step_time_s").get<double>(), measured);  // a consistent set
    }
    EXPECT_EQ(doc.at("rows").at(0).at("line"), 3);  // after the comment and the header
  }
  const std::string mine = dir.write("mine.json", "{\"written_by\": \"me\"}\n");
  auto refused = args;
  refused.back() = mine;
  const auto r = run_racksim(refused);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("was not written by racksim"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("calibrate: before fitting"), std::string::npos) << "nothing simulated";
  EXPECT_EQ(read_file(mine), "{\"written_by\": \"me\"}\n");
}

// The report of a fit of `param` that stops after one evaluation (its bounds are what it shows),
// on `measured` (a CSV's text; empty: two rows simulated with known efficiencies).
std::string one_evaluation_fit(const std::string& param, const std::vector<std::string>& sets,
                               const std::string& measured = "") {
  TempDir dir;
  const std::string base = dir.write("base.textproto", kBase);
  const std::string csv =
      dir.write("measured.csv", measured.empty() ? measured_csv(base, {1024, 4096}) : measured);
  std::vector<std::string> args = {"calibrate", "--base", base,        "--measured", csv,
                                   "--params",  param,    "--holdout", "none",       "--max-evals",
                                   "1",         "--jobs", "2"};
  for (const std::string& set : sets) {
    args.push_back("--set");
    args.push_back(set);
  }
  const auto r = run_racksim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  return r.out;
}

// The report splits the errors by kind of layout as well as by group: here TP1 and TP2 on one and
// two GPUs of the preset's 8-GPU NVLink domain, "no TP" and "TP smaller than a scale-up domain".
TEST(Calibrate, SplitsTheErrorsByKindOfLayout) {
  const std::string out = one_evaluation_fit(
      "hardware.compute.gemm", {},
      "hardware.gpus_per_node,layout.tp,measured_step_time_s\n1,1,0.05\n2,2,0.05\n");
  EXPECT_NE(out.find("  errors by kind of layout (in sample):\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    no TP, no pipeline: 1 point, mean |error| "), std::string::npos) << out;
  EXPECT_NE(out.find("    TP smaller than a scale-up domain, no pipeline: 1 point"),
            std::string::npos)
      << out;
}

// A per-tile overhead is a size in K elements (64 for this preset): searched from a tenth to ten
// times its start, not clamped into (0, 1] as an efficiency would be.
TEST(Calibrate, BoundsAnOverheadAsASizeNotAFraction) {
  const std::string out = one_evaluation_fit("hardware.compute.gemm_k_overhead", {});
  EXPECT_NE(out.find("(was 64; bounds 6.4 .. 640)"), std::string::npos) << out;
}

// The sustained GEMM ceiling is a fraction of the peak although its name holds "_s" (a
// seconds field ends in it): searched within (0, 1], so a fit cannot hand the simulator a
// ceiling above the peak.
TEST(Calibrate, BoundsTheSustainedCeilingAsAFraction) {
  // The base's Hopper preset holds its power limit as a clock ratio, which a ceiling replaces.
  const std::string out = one_evaluation_fit(
      "hardware.compute.gemm_sustained",
      {"hardware.compute.gemm_sustained=0.8", "hardware.compute.sustained_clock_ratio=1"});
  EXPECT_NE(out.find("(was 0.8; bounds 0.01 .. 1)"), std::string::npos) << out;
}

// racksim calibrate of the GEMM fraction on three rows of kBase that differ in the sequence,
// with `options` added.
testing::CommandResult calibrate_three_rows(const TempDir& dir,
                                            const std::vector<std::string>& options) {
  const std::string base = dir.write("base.textproto", kBase);
  const std::string csv = dir.write(
      "measured.csv", "training.seq_length,measured_step_time_s\n1024,0.1\n2048,0.2\n4096,0.4\n");
  std::vector<std::string> args{
      "calibrate", "--base", base, "--measured", csv, "--params", "hardware.compute.gemm",
      "--jobs",    "2"};
  args.insert(args.end(), options.begin(), options.end());
  return run_racksim(args);
}

// A held-out fold with no row left to fit on under --fit-every is the command line's error, found
// before anything is simulated (no "before fitting" line).
TEST(Calibrate, FitEveryThatLeavesAFoldNothingFailsBeforeSimulating) {
  TempDir dir;
  const auto r = calibrate_three_rows(dir, {"--holdout", "kfold:3", "--fit-every", "10"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("held-out fold 1 leaves no row to fit on"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("before fitting"), std::string::npos) << r.err;
}

// --loss names what the fit minimizes; another word is the command line's error, before
// anything is simulated.
TEST(Calibrate, AnUnknownLossIsRefusedBeforeSimulating) {
  TempDir dir;
  const auto r = calibrate_three_rows(dir, {"--loss", "mape"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--loss"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'mape' is not a loss: soft-l1 or abs"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("before fitting"), std::string::npos) << r.err;
}

// Rows that differ only in the micro-batch, without pipeline stages, and take longer with a
// larger one: the report names the row and the closest time a model that does not slow down can
// give it (the faster row's), and the floor over all rows, before fitting anything.
TEST(Calibrate, NamesRowsThatSlowDownWithALargerMicroBatch) {
  const std::string out = one_evaluation_fit(
      "hardware.compute.gemm", {},
      "training.global_batch_size,training.micro_batch_size,measured_step_time_s\n"
      "4,1,0.40\n4,2,0.30\n4,4,0.60\n");
  // The closest consistent times are 0.40, 0.30, 0.30: the last row is 50 % off, 16.67 % a row.
  EXPECT_NE(out.find("measurement floor 16.67 % mean |error| (3 points): 1 of 1 families"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("line 4: measured 0.6 s, at best 0.3 s (-50.0 %)"), std::string::npos) << out;
  EXPECT_NE(out.find("the fit against these closest times instead: mean |error|"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("rank correlation (against the closest times) all"), std::string::npos) << out;
}

const std::string kRoot = RACKSIM_SOURCE_DIR;
const std::string kVtrainBase = kRoot + "/scenarios/calibration/a100-vtrain-kernel-base.textproto";

// `racksim calibrate --floor-only` on the vTrain kernel base with `measured`, then `extra`.
testing::CommandResult vtrain_floor(const std::string& measured,
                                    const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"calibrate", "--floor-only", "--base",
                                   kVtrainBase, "--measured",   measured};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_racksim(args);
}

// `--floor-only` on vTrain's 1,440 single-node rows links the models that differ only in width
// or depth (analysis/measurement_floor.h). At TP4 and TP8 with micro-batches of 1 and 2, every
// 1,024-wide model was measured slower than its 2,048-wide sibling, up to 17 %; nothing else
// contradicts a model of kernels and collectives. The floor falls on the narrower models' rows.
TEST(Calibrate, FloorOnlyLinksModelsThatDifferOnlyInSize) {
  const auto r = vtrain_floor(kRoot + "/scenarios/calibration/a100-single-node.csv",
                              {"--set", "sim.fold_replicas=false", "--set", "hardware.nodes=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("measurement floor 0.68 % mean |error| (1440 points): 0 of 432 families"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("64 of 1152 pairs of families that differ only in the model's width or "
                       "depth take longer with the smaller model"),
            std::string::npos)
      << r.out;
  // 0.35B TP4 PP2, micro-batch 2, 4 sequences: 128.2 ms against the 1.31B model's 113.2 ms.
  EXPECT_NE(r.out.find("line 9: measured 0.1282 s, at best 0.1132 s (-11.7 %)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("0.35B 1.46 % (180 points); 0.71B 0.00 % (180 points)"), std::string::npos)
      << r.out;
  // vTrain ran DeepSpeed's engine, which reduces the gradients after the last backward: in the
  // 208 families without pipeline stages a doubled micro-batch leaves the step at least half as
  // long. 0.35B TP2 DP4, global batch 32: 366.9 ms at micro-batch 2 (line 524), 172.7 ms at 4
  // (line 1274), so the first is at best 2 x 172.7 ms.
  const size_t own = r.out.find("with the step's own costs as each row's framework runs them");
  ASSERT_NE(own, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("every micro-batch of 208 families", own), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("floor 0.79 % mean |error|", own), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("line 524: measured 0.3669 s, at best 0.3454 s (-5.9 %)", own),
            std::string::npos)
      << r.out;
}

// racksim's own single-node predictions (the all-rows fit's, committed beside the measurements) as
// the measurements: steps every bound allows, the framework's fixed step costs included, so both
// floors are zero. A model whose micro-batches got cheaper with more rows, or whose step costs
// moved with the micro-batch under DeepSpeed's reduction, would fail here.
TEST(Calibrate, RacksimsOwnSingleNodeStepsKeepTheFrameworksFloor) {
  const auto fit = nlohmann::json::parse(
      read_file(kRoot + "/scenarios/calibration/a100-single-node-all-rows.json"));
  std::map<int, double> predicted_s;
  for (const auto& row : fit.at("rows")) {
    predicted_s[row.at("line").get<int>()] = row.at("fitted_step_time_s").get<double>();
  }
  ASSERT_EQ(predicted_s.size(), 1440u);
  std::istringstream rows(read_file(kRoot + "/scenarios/calibration/a100-single-node.csv"));
  std::string line, rewritten;
  for (int number = 1; std::getline(rows, line); ++number) {
    if (predicted_s.count(number)) {
      line =
          line.substr(0, line.rfind(',') + 1) + fmt::format("{:.6f}", 1000 * predicted_s[number]);
    }
    rewritten += line + "\n";
  }
  TempDir dir;
  const auto r = vtrain_floor(dir.write("own.csv", rewritten),
                              {"--set", "sim.fold_replicas=false", "--set", "hardware.nodes=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("measurement floor 0.00 % mean |error| (1440 points)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("every micro-batch of 208 families"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("floor 0.00 % mean |error|; it moves no row further"), std::string::npos)
      << r.out;
}

// `--floor-only` on vTrain's 41 multi-node rows: the floor alone, no --params, nothing simulated.
// Besides the three families without pipeline stages that slow down with a larger micro-batch,
// it bounds the pipelined 18.4B TP4 PP2 DP32 family: 10.03, 10.95 and 10.86 s at micro-batches
// 2, 4 and 8 (32 sequences per pipeline: 16, 8 and 4 micro-batches over 2 stages). From 2 to 4
// the step may grow at most (16 + 2 x 1) / (16 + 1) = 18/17 of 10.03 s = 10.62 s.
TEST(Calibrate, FloorOnlyBoundsPipelinedFamiliesAndSimulatesNothing) {
  const std::string multi_node = kRoot + "/scenarios/calibration/a100-multi-node.csv";
  const auto r = vtrain_floor(multi_node);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("measurement floor 1.52 % mean |error| (41 points): 4 of 9 families"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("line 34: measured 10.95 s, at best 10.62 s (-3.0 %)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("line 18: measured 9.839 s, at best 4.972 s (-49.5 %)"), std::string::npos)
      << r.out;
  // Per model size: 18.4B's two rows (8.6 and 3.0 %) over 15, 3.6B's two (49.5 and 1.2 %) over 26.
  EXPECT_NE(r.out.find("the floor per group: 18.4B 0.77 % (15 points); 3.6B 1.95 % (26 points)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("Fitted parameters"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");  // no progress lines: nothing was simulated

  TempDir dir;
  // --json: the same floor as numbers, every row's closest time, no fit's members.
  const std::string json = (fs::path(dir.path()) / "floor.json").string();
  ASSERT_EQ(vtrain_floor(multi_node, {"--json", json}).exit_code, 0);
  const auto doc = nlohmann::json::parse(read_file(json));
  EXPECT_NEAR(doc.at("floor").at("mean_abs_relative").get<double>(), 0.0152, 5e-5);
  EXPECT_EQ(doc.at("floor").at("families_broken"), 4);
  EXPECT_EQ(doc.at("floor").at("families"), 9);
  // Six families without pipeline stages hold their costs; none of their rows moves further.
  const auto& own = doc.at("floor").at("framework_step_costs");
  EXPECT_EQ(own.at("fixed_cost_families"), 6);
  EXPECT_NEAR(own.at("mean_abs_relative").get<double>(), 0.0152, 5e-5);
  EXPECT_FALSE(doc.contains("parameters"));
  ASSERT_EQ(doc.at("rows").size(), 41u);
  const auto& line34 = doc.at("rows").at(31);
  EXPECT_EQ(line34.at("line"), 34);
  EXPECT_NEAR(line34.at("closest_step_time_s").get<double>(), 10.62, 0.005);
  EXPECT_FALSE(line34.contains("fitted_step_time_s"));

  const std::string out = (fs::path(dir.path()) / "cal.textproto").string();
  const auto refused = vtrain_floor(multi_node, {"--out", out});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--floor-only fits nothing to write"), std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(out));
}

// `--floor-only` on vTrain's 39.1B and 175B rows links the layouts that differ only in the TP size
// (analysis/measurement_floor.h). Four pairs contradict each other: 39.1B TP2 PP16 DP16 (line 7)
// against TP4 PP16 and TP8 PP16 (lines 13 and 38), TP2 PP8 (line 5) against TP4 PP8 (line 10) and
// TP4 PP8 against TP8 PP8 (line 30). racksim's own predictions (the results file's transfer
// column) are steps every bound allows: with them as the measurements the floor is zero, as it
// must be for the floor to bound racksim.
TEST(Calibrate, FloorOnlyLinksLayoutsThatDifferOnlyInTheTpSize) {
  const std::string measured = kRoot + "/data/measured/vtrain-a100-multi-node-large.csv";
  const auto r = vtrain_floor(measured);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("; 4 of 14 pairs of families that differ only in the TP size"),
            std::string::npos)
      << r.out;
  for (const auto& [small, large] :
       std::vector<std::pair<int, int>>{{7, 13}, {7, 38}, {5, 10}, {10, 30}}) {
    EXPECT_NE(
        r.out.find(fmt::format("line {}: its layout takes longer than its sibling with a larger "
                               "TP (line {}",
                               small, large)),
        std::string::npos)
        << small << " " << large << "\n"
        << r.out;
  }

  // The same rows with racksim's predictions as their measurements.
  const std::vector<CsvLine> results =
      csv_lines(read_file(kRoot + "/data/measured/vtrain-a100-multi-node-large-results.csv"));
  ASSERT_FALSE(results.empty());
  const std::vector<std::string>& header = results[0].cells;
  const auto transfer = std::find(header.begin(), header.end(), "transfer_step_time_s");
  ASSERT_NE(transfer, header.end());
  std::map<std::string, std::string> predicted_ms;
  for (size_t i = 1; i < results.size(); ++i) {
    const std::vector<std::string>& cells = results[i].cells;
    ASSERT_EQ(cells.size(), header.size()) << results[i].number;
    predicted_ms[cells[0]] =
        fmt::format("{:.4f}", 1000 * std::stod(cells[transfer - header.begin()]));
  }
  std::istringstream rows(read_file(measured));
  std::string line;
  std::string rewritten;
  while (std::getline(rows, line)) {
    const size_t name_end = line.find(','), last = line.rfind(',');
    if (line[0] != '#' && line.rfind("name,", 0) != 0) {
      ASSERT_EQ(predicted_ms.count(line.substr(0, name_end)), 1u) << line;
      line = line.substr(0, last + 1) + predicted_ms[line.substr(0, name_end)];
    }
    rewritten += line + "\n";
  }
  TempDir dir;
  const auto own = vtrain_floor(dir.write("own.csv", rewritten));
  ASSERT_EQ(own.exit_code, 0) << own.err;
  EXPECT_NE(own.out.find("measurement floor 0.00 % mean |error| (68 points): 0 of 15 families"),
            std::string::npos)
      << own.out;
  EXPECT_NE(own.out.find("; 0 of 14 pairs"), std::string::npos) << own.out;
}

// A measured time with trailing text or an infinity is a typo, not a time: std::stod read "12abc"
// as 12 and "inf" as a step no model reaches. Refused with the file, line, column and header
// name, exit 2, before anything is simulated.
TEST(Calibrate, AMeasuredTimeThatIsNotWhollyANumberIsRefused) {
  TempDir dir;
  const std::string base = dir.write("base.textproto", kBase);
  for (const std::string bad : {"12abc", "inf", "0x10", "nan"}) {
    const std::string csv = dir.write(
        "measured.csv", "training.seq_length,measured_step_time_s\n1024,0.1\n2048," + bad + "\n");
    const auto r = run_racksim({"calibrate", "--floor-only", "--base", base, "--measured", csv});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.err.find("measured.csv:3:2"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("field 'measured_step_time_s': '" + bad + "' is not a number"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(Calibrate, BadCsvNamesTheLine) {
  TempDir dir;
  const std::string base = dir.write("base.textproto", kBase);
  const std::string csv =
      dir.write("measured.csv", "layout.tp,measured_step_time_s\n1,0.5\n1,abc\n");
  const auto r = run_racksim(
      {"calibrate", "--base", base, "--measured", csv, "--params", "hardware.compute.gemm"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("measured.csv:3"), std::string::npos) << r.err;
}

// --measured A.csv,B.csv reads both as one set: a row names its file where it is reported, and a
// bad row is named by its own file and line. The files may differ in their columns (a `name`
// column is ignored); either every file has a group column or none does.
TEST(Calibrate, SeveralMeasuredFilesAreOneSet) {
  TempDir dir;
  const std::string base = dir.write("base.textproto", kBase);
  const std::string a =
      dir.write("a.csv",
                "training.global_batch_size,training.micro_batch_size,measured_step_time_s\n"
                "4,1,0.40\n4,2,0.30\n");
  const std::string b =
      dir.write("b.csv",
                "name,training.micro_batch_size,training.global_batch_size,measured_step_time_s\n"
                "x,4,4,0.60\n");
  auto fit = [&](const std::string& measured) {
    return run_racksim({"calibrate", "--base", base, "--measured", measured, "--params",
                        "hardware.compute.gemm", "--holdout", "none", "--max-evals", "1", "--jobs",
                        "2"});
  };
  const auto r = fit(a + "," + b);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("(3 points)"), std::string::npos) << r.out;
  // The third row, from the second file, slows down with the larger micro-batch of the first.
  EXPECT_NE(r.out.find("line b.csv:2: measured 0.6 s, at best 0.3 s (-50.0 %)"), std::string::npos)
      << r.out;
  const std::string bad = dir.write("bad.csv", "layout.tp,measured_step_time_s\n1,abc\n");
  const auto bad_row = fit(a + "," + bad);
  EXPECT_EQ(bad_row.exit_code, 2);
  EXPECT_NE(bad_row.err.find("bad.csv:2"), std::string::npos) << bad_row.err;
  const std::string grouped =
      dir.write("grouped.csv", "group,layout.tp,measured_step_time_s\n1B,1,0.5\n");
  const auto mixed = fit(a + "," + grouped);
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.err.find("a group column in every measured file or in none"), std::string::npos)
      << mixed.err;
}

}  // namespace
}  // namespace racksim
