// The validation evidence a training report prints ("How far to trust it"): the compiled-in
// rows match the README's table for the configurations it validates, nothing else matches, and
// each configuration's clock ratio is the one its preset or calibration file actually runs at,
// so a report never shows rows of another configuration.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/validation_evidence.h"
#include "config/hardware_loader.h"
#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using analysis::HardwareConfiguration;
using analysis::validated_configurations;
using analysis::validation_evidence;

TEST(ValidationEvidence, HopperFp8AtTheHeldRateShowsTheReadmesRows) {
  const auto h100 = validation_evidence({"dgx-h100", "", 0.862, "FP8"});
  ASSERT_EQ(h100.checks.size(), 2u);
  EXPECT_EQ(h100.checks[0].rows, 5);
  EXPECT_NEAR(h100.checks[0].mape_percent, 4.93, 0.06);
  EXPECT_EQ(h100.checks[1].rows, 11);
  EXPECT_NEAR(h100.checks[1].mape_percent, 6.00, 0.06);
  EXPECT_NEAR(h100.checks[1].worst_percent, -12.4, 0.05);
  // DeepSeek-V3's rows check MoE steps: a dense FP8 run on the H800 preset has none.
  const auto h800 = validation_evidence({"hgx-h800", "", 0.862, "FP8", "MoE"});
  ASSERT_EQ(h800.checks.size(), 1u);
  EXPECT_NEAR(h800.checks[0].worst_percent, -5.7, 0.05);
  EXPECT_TRUE(validation_evidence({"hgx-h800", "", 0.862, "FP8"}).checks.empty());
  // NVIDIA's gpt-oss rows and its MoE team's Qwen3 runs (ModelZoo, Megatron-LM) check MoE
  // steps in BF16, the Megatron-Bridge Qwen3 rows MoE steps in FP8; the H100's Llama and NeMo FP8
  // rows check dense ones.
  const auto h100_bf16_moe = validation_evidence({"dgx-h100", "", 0.862, "16-bit", "MoE"});
  ASSERT_EQ(h100_bf16_moe.checks.size(), 2u);
  EXPECT_EQ(h100_bf16_moe.checks[1].rows, 6);
  EXPECT_NEAR(h100_bf16_moe.checks[1].worst_percent, -26.6, 0.05);  // Qwen3-30B, 32 H100
  const auto h100_moe = validation_evidence({"dgx-h100", "", 0.862, "FP8", "MoE"});
  ASSERT_EQ(h100_moe.checks.size(), 1u);
  EXPECT_EQ(h100_moe.checks[0].rows, 4);
  EXPECT_NEAR(h100_moe.checks[0].worst_percent, -65.5, 0.05);  // all four with the recipes' overlap
  // On GB200, the Qwen3 and DeepSeek-V3 rows follow gpt-oss's, then the Megatron-MoE-ModelZoo's.
  const auto gb200_moe = validation_evidence({"gb200-nvl72", "", 0.862, "16-bit", "MoE"});
  ASSERT_EQ(gb200_moe.checks.size(), 3u);
  EXPECT_EQ(gb200_moe.checks[1].rows, 2);
  EXPECT_NEAR(gb200_moe.checks[1].worst_percent, -19.9, 0.05);
}

TEST(ValidationEvidence, TheA100CalibrationShowsItsFitsAndSaysWhichItSaw) {
  const auto a100 =
      validation_evidence({"dgx-a100", "a100-kernel-calibration.textproto", 1, "16-bit"});
  ASSERT_EQ(a100.checks.size(), 6u);
  EXPECT_NEAR(a100.checks[0].mape_percent, 6.36, 0.06);  // Narayanan et al., another cluster
  EXPECT_FALSE(a100.checks[0].in_sample);
  EXPECT_EQ(a100.checks[1].rows, 61);  // MosaicML's MPT rows, another stack (FSDP, BF16)
  EXPECT_FALSE(a100.checks[1].in_sample);
  EXPECT_EQ(a100.checks[2].rows, 8);  // torchtitan's FSDP2 rows
  EXPECT_FALSE(a100.checks[2].in_sample);
  EXPECT_EQ(a100.checks[4].rows, 1296);  // the single-node rows outside the fit
  EXPECT_FALSE(a100.checks[4].in_sample);
  EXPECT_TRUE(a100.checks[5].in_sample);  // the multi-node step cost was fitted on these
}

TEST(ValidationEvidence, ConfigurationsNothingValidatesHaveNoRows) {
  EXPECT_TRUE(validation_evidence({"b300", "", 0.862, "FP8"}).checks.empty());
  EXPECT_TRUE(validation_evidence({"dgx-h200", "", 0.862, "16-bit"}).checks.empty());  // BF16
  EXPECT_TRUE(validation_evidence({"hgx-h800", "", 0.862, "16-bit"}).checks.empty());
  EXPECT_TRUE(validation_evidence({"dgx-h100", "", 0.9, "FP8"}).checks.empty());
  EXPECT_TRUE(validation_evidence({"dgx-a100", "my-fit.textproto", 1, "16-bit"}).checks.empty());
  EXPECT_TRUE(validation_evidence({"", "", 1, "16-bit"}).checks.empty());  // custom nodes
}

// Where no row checks a configuration, the report lists the preset's checked ones: a BF16 run on
// the H800 preset is pointed to its FP8 rows (DeepSeek-V3's), at the held rate and at burst.
TEST(ValidationEvidence, AnUncheckedConfigurationIsPointedToItsPresetsCheckedOnes) {
  const auto bf16 = analysis::same_preset_evidence({"hgx-h800", "", 0.862, "16-bit"});
  ASSERT_EQ(bf16.size(), 2u);
  for (const auto& other : bf16) {
    EXPECT_EQ(other.configuration.training_dtype, "FP8");
    EXPECT_FALSE(other.checks.empty());
  }
  EXPECT_EQ(analysis::checks_summary(bf16[0]), "1 row in 1 table, MAPE 5.75 %");
  // A checked configuration's siblings leave it out (the H100's FP8 at burst, its BF16 gpt-oss
  // rows and its FP8 Qwen3 rows, held and at burst); hardware without a preset has none.
  EXPECT_EQ(analysis::same_preset_evidence({"dgx-h100", "", 0.862, "FP8"}).size(), 5u);
  EXPECT_TRUE(analysis::same_preset_evidence({"b300", "", 0.862, "FP8"}).empty());
  EXPECT_TRUE(analysis::same_preset_evidence({"", "", 1, "16-bit"}).empty());
}

// The held rows are keyed on the ratio the preset itself sets: were a preset's ratio to change,
// its reports would otherwise show rows measured at another rate.
TEST(ValidationEvidence, HeldRatiosAreThePresetsOwn) {
  int held = 0;
  for (const HardwareConfiguration& c : validated_configurations()) {
    if (!c.calibration.empty() || c.sustained_clock_ratio == 1) continue;
    const auto loaded = config::load_hardware_preset(c.preset, 0, {});
    EXPECT_NEAR(loaded.scenario.hardware().compute().sustained_clock_ratio(),
                c.sustained_clock_ratio, 1e-9)
        << c.preset;
    ++held;
  }
  EXPECT_GE(held, 3);  // dgx-a100, dgx-h100, hgx-h800
}

TEST(ValidationEvidence, CalibrationFilesSetTheRatioTheirRowsAreKeyedOn) {
  int files = 0;
  for (const HardwareConfiguration& c : validated_configurations()) {
    if (c.calibration.empty()) continue;
    std::ifstream in(std::string(RACKSIM_SOURCE_DIR) + "/scenarios/calibration/" + c.calibration);
    ASSERT_TRUE(in) << c.calibration;
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("sustained_clock_ratio: 1\n"), std::string::npos) << c.calibration;
    EXPECT_EQ(c.sustained_clock_ratio, 1);
    ++files;
  }
  EXPECT_EQ(files, 1);
}

// A 2-layer Llama 3 8B on one DGX A100 or H100: a step in a fraction of a second.
std::string small_scenario(const char* preset, const char* dtype) {
  return std::string(R"(model { preset: "llama3-8b" num_layers: 2 }
hardware { preset: ")") +
         preset + R"(" nodes: 1 }
layout { tp: 8 pp: 1 }
training { global_batch_size: 8 micro_batch_size: 1 seq_length: 2048 dtype: )" +
         dtype + " }\nsim { fidelity: ANALYTIC }\n";
}

// The report names the compute, GPU and collective fields the scenario sets itself (a --set
// here), since the rows checked the preset with their own scenarios' values; not the fields a
// calibration file gives it, which are part of the configuration the rows are keyed on.
TEST(ValidationEvidence, TheReportNamesTheModelFieldsTheScenarioSetsItself) {
  testing::TempDir dir;
  const std::string h100 = dir.write("h100.textproto", small_scenario("dgx-h100", "FP8"));
  const auto plain = testing::run_racksim({"run", h100});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("in FP8 against measured and published steps"), std::string::npos)
      << plain.out;
  EXPECT_EQ(plain.out.find("This scenario sets"), std::string::npos) << plain.out;
  const auto what_if = testing::run_racksim({"run", h100, "--set", "hardware.compute.gemm=0.9"});
  ASSERT_EQ(what_if.exit_code, 0) << what_if.err;
  EXPECT_NE(what_if.out.find("This scenario sets hardware.compute.gemm itself"), std::string::npos)
      << what_if.out;
  const std::string a100 = dir.write("a100.textproto", small_scenario("dgx-a100", "FP16"));
  const auto calibrated =
      testing::run_racksim({"run", a100, "--set",
                            "calibration=" + std::string(RACKSIM_SOURCE_DIR) +
                                "/scenarios/calibration/a100-kernel-calibration.textproto"});
  ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
  EXPECT_NE(calibrated.out.find("with a100-kernel-calibration.textproto (sustained_clock_ratio "
                                "1) in FP16 or BF16 against"),
            std::string::npos)
      << calibrated.out;
  EXPECT_EQ(calibrated.out.find("This scenario sets"), std::string::npos) << calibrated.out;
}

analysis::ValidationEvidence two_runs() {
  analysis::ValidationEvidence evidence;
  analysis::ValidationCheck check{"table", 2, 5, -7, false, {}, {}};
  check.runs = {{"GPT 10B", 10, 64, 1, 7, -7}, {"GPT 40B", 40, 256, 1, 3, +3}};
  evidence.checks = {check};
  return evidence;
}

// Model size and GPU count weigh alike, on a log scale: 20B on 64 GPUs is a factor 2 from
// 10B on 64 and a factor 2 x 4 from 40B on 256; 20B on 256 is the other way round.
TEST(ValidationEvidence, TheNearestCheckedRunIsNearestInSizeAndGpusOnALogScale) {
  const auto evidence = two_runs();
  const auto small = analysis::nearest_checked_run(evidence, 20e9, 64);
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->run.run, "GPT 10B");
  EXPECT_EQ(small->what, "table");
  EXPECT_DOUBLE_EQ(small->parameters_b, 20);
  const auto wide = analysis::nearest_checked_run(evidence, 20e9, 256);
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ(wide->run.run, "GPT 40B");
  // A factor 2 x 2.5 from the first, 2 x 1.6 from the second.
  EXPECT_EQ(analysis::nearest_checked_run(evidence, 20e9, 160)->run.run, "GPT 40B");
  EXPECT_FALSE(analysis::nearest_checked_run(evidence, 0, 64).has_value());
  EXPECT_FALSE(analysis::nearest_checked_run(analysis::ValidationEvidence{}, 20e9, 64));
  EXPECT_EQ(analysis::describe_nearest(*small),
            "GPT 10B on 64 GPUs (table): error -7.0 %; this run: 20B parameters on 64 GPUs (2x "
            "the model, 1x the GPUs)");
}

// The evidence file's runs are the tables' rows: Narayanan et al.'s 145.6B row on 1,536 GPUs is
// the one nearest a 175B model on 1,024 A100 (vTrain's 175B ran on 512: a factor 2 in GPUs).
TEST(ValidationEvidence, TheEvidenceFileNamesEachTablesRuns) {
  const auto a100 = validation_evidence({"dgx-a100", "", 0.862, "16-bit"});
  ASSERT_EQ(a100.checks.size(), 4u);
  EXPECT_EQ(a100.checks[0].runs.size(), 10u);  // one per row of Table 1
  // MosaicML's 61 MPT rows: nine models, each on 8 GPUs, the 70B also on 32 and 64.
  EXPECT_EQ(a100.checks[1].runs.size(), 10u);
  EXPECT_NEAR(a100.checks[1].runs.front().parameters_b, 0.125, 1e-9);  // "MPT 125M"
  // torchtitan's eight rows: four models on 64 GPUs.
  EXPECT_EQ(a100.checks[2].runs.size(), 4u);
  EXPECT_NEAR(a100.checks[2].mape_percent, 1.8, 0.05);
  int rows = 0;
  for (const auto& run : a100.checks[3].runs) rows += run.rows;
  EXPECT_EQ(rows, a100.checks[3].rows);  // vTrain's 68 rows, grouped by model
  const auto nearest = analysis::nearest_checked_run(a100, 174.6e9, 1024);
  ASSERT_TRUE(nearest.has_value());
  EXPECT_EQ(nearest->run.run, "GPT 145.6B");
  EXPECT_EQ(nearest->run.gpus, 1536);
  EXPECT_NEAR(nearest->run.mean_error_percent, -0.7, 0.05);
}

// A report prints the nearest run and carries it in report.json, which a plan reads back.
TEST(ValidationEvidence, TheReportNamesTheNearestCheckedRun) {
  testing::TempDir dir;
  const std::string h100 = dir.write("h100.textproto", small_scenario("dgx-h100", "FP8"));
  const auto run = testing::run_racksim({"run", h100, "--out", (dir.path() / "out").string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("  nearest checked run: "), std::string::npos) << run.out;
  std::ifstream file(dir.path() / "out" / "report.json");
  const auto report = nlohmann::json::parse(file);
  const auto evidence = analysis::validation_evidence_from_json(report.at("validation"));
  ASSERT_TRUE(evidence.nearest.has_value());
  EXPECT_EQ(evidence.nearest->gpus, report.at("mfu").at("gpus").get<int>());
  EXPECT_NE(run.out.find(analysis::describe_nearest(*evidence.nearest)), std::string::npos);
  // The scenario's kind of layout travels the same way; no H100 row has TP8 on one server.
  EXPECT_EQ(evidence.layout_kind, "TP a whole scale-up domain, no pipeline");
  EXPECT_FALSE(evidence.same_layout_kind.has_value());
  EXPECT_NE(run.out.find("  same kind of layout (TP a whole scale-up domain, no pipeline): no "
                         "checked row\n"),
            std::string::npos)
      << run.out;
}

// Where a layout's tensor-parallel and pipeline traffic runs, against its scale-up domain: an
// 8-GPU server's, a 4-GPU one's, an NVL72 rack's.
TEST(ValidationEvidence, ALayoutsKindSaysWhereItsTensorAndPipelineTrafficRuns) {
  using analysis::layout_kind;
  EXPECT_EQ(layout_kind(1, 1, 32, 8), "no TP, no pipeline");
  EXPECT_EQ(layout_kind(2, 2, 8, 8),
            "TP smaller than a scale-up domain, pipeline stages inside one scale-up domain");
  EXPECT_EQ(layout_kind(4, 16, 512, 8),
            "TP smaller than a scale-up domain, pipeline stages across scale-up domains");
  EXPECT_EQ(layout_kind(8, 8, 512, 8),
            "TP a whole scale-up domain, pipeline stages across scale-up domains");
  EXPECT_EQ(layout_kind(16, 1, 256, 8), "TP across scale-up domains, no pipeline");
  EXPECT_EQ(layout_kind(4, 1, 4, 4), "TP a whole scale-up domain, no pipeline");
  // On NVL72 racks TP16 stays on NVLink, and a pipeline crosses racks only beyond 72 GPUs.
  EXPECT_EQ(layout_kind(16, 4, 72, 72),
            "TP smaller than a scale-up domain, pipeline stages inside one scale-up domain");
  EXPECT_EQ(layout_kind(8, 4, 144, 72),
            "TP smaller than a scale-up domain, pipeline stages across scale-up domains");
}

// The rows of one kind, gathered over every check of a configuration: counts add, MAPE and mean
// are the rows' (weighted by rows), the worst is the largest |error| with its sign, and one
// model on one GPU count is one run.
TEST(ValidationEvidence, TheRowsOfOneKindOfLayoutAddUpOverTheChecks) {
  analysis::ValidationEvidence evidence;
  analysis::ValidationCheck first{"first", 4, 0, 0, false, {}, {}};
  first.layouts = {{{"GPT 40B", 40, 512, 3, 10, -10}, 4, 16, 64, 8, 8, -20},
                   {{"GPT 40B", 40, 512, 1, 2, +2}, 8, 8, 64, 8, 8, +2},
                   {{"GPT 10B", 10, 256, 1, 4, -4}, 2, 8, 32, 8, 8, -4}};
  analysis::ValidationCheck second{"second", 1, 0, 0, false, {}, {}};
  second.layouts = {{{"GPT 40B", 40, 512, 1, 6, +6}, 2, 4, 64, 8, 8, +6}};
  evidence.checks = {first, second};
  const std::string kind =
      "TP smaller than a scale-up domain, pipeline stages across scale-up domains";
  const auto rows = analysis::same_layout_kind(evidence, kind);
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->rows, 5);
  EXPECT_DOUBLE_EQ(rows->mape_percent, (3 * 10 + 4 + 6) / 5.0);
  EXPECT_DOUBLE_EQ(rows->mean_error_percent, (3 * -10 - 4 + 6) / 5.0);
  EXPECT_DOUBLE_EQ(rows->worst_percent, -20);
  ASSERT_EQ(rows->runs.size(), 2u);  // smallest model first
  EXPECT_EQ(rows->runs[0].run, "GPT 10B");
  EXPECT_EQ(rows->runs[1].rows, 4);
  EXPECT_DOUBLE_EQ(rows->runs[1].mean_error_percent, (3 * -10 + 6) / 4.0);
  EXPECT_FALSE(
      analysis::same_layout_kind(evidence, "TP across scale-up domains, no pipeline").has_value());
  evidence.layout_kind = kind;
  evidence.same_layout_kind = rows;
  // A plan's table row says the same in one line.
  EXPECT_NE(analysis::validation_summary(evidence).find(
                "; TP smaller than a scale-up domain, pipeline stages across scale-up domains: 5 "
                "rows, MAPE 8.0 %, mean -5.6 %"),
            std::string::npos)
      << analysis::validation_summary(evidence);
  const auto back =
      analysis::validation_evidence_from_json(analysis::validation_evidence_json(evidence));
  ASSERT_TRUE(back.same_layout_kind.has_value());
  EXPECT_EQ(back.layout_kind, kind);
  EXPECT_EQ(back.same_layout_kind->runs.size(), 2u);
  EXPECT_DOUBLE_EQ(back.same_layout_kind->worst_percent, -20);
}

// The kind of layout vTrain's cluster runs worst (docs/validation.md, "6 December, morning"):
// TP2 and TP4 with pipeline stages across nodes, too fast on 18.4B and 39.1B and not on 175B.
// A report of such a layout on the A100 calibration shows it.
TEST(ValidationEvidence, TheA100CalibrationShowsWhereItsLayoutKindMisses) {
  const auto a100 =
      validation_evidence({"dgx-a100", "a100-kernel-calibration.textproto", 1, "16-bit"});
  const auto misses = analysis::same_layout_kind(
      a100, analysis::layout_kind(4, 8, 512, 8));  // TP smaller than a server, PP across
  ASSERT_TRUE(misses.has_value());
  EXPECT_EQ(misses->rows, 5 + 20 + 10);  // 18.4B, 39.1B, 175B
  EXPECT_LT(misses->mean_error_percent, -5);
  EXPECT_NEAR(misses->worst_percent, -38.1, 0.05);  // 39.1B TP2 PP16, micro-batch 3
  ASSERT_EQ(misses->runs.size(), 3u);
  EXPECT_LT(misses->runs[1].mean_error_percent, -10);          // 39.1B
  EXPECT_LT(std::abs(misses->runs[2].mean_error_percent), 3);  // 175B
  const auto whole_node = analysis::same_layout_kind(a100, analysis::layout_kind(8, 8, 512, 8));
  ASSERT_TRUE(whole_node.has_value());
  EXPECT_LT(whole_node->mape_percent, 5);
}

}  // namespace
}  // namespace racksim
