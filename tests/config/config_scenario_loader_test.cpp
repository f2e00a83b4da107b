// Scenario loading: parsing (text format and JSON), presets, defaults, --set overrides and the
// checks, and above all that every error names the field and the line a user has to change.
// The suite is named app_scenario_loader so that `ctest -R app_` selects it.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "config/json_locations.h"
#include "config/scenario_loader.h"
#include "tests/support/scenario_errors.h"
#include "topologies/hardware_presets.h"
#include "workloads/model/model_presets.h"

namespace racksim::config {
namespace {

// Line numbers below are 1-based lines of these texts (the first line is the comment).
constexpr const char* kTextScenario = R"txt(# Llama-3 8B on two DGX H100 nodes.
name: "llama3-8b-2x-dgx-h100"
model {
  preset: "llama3-8b"
  num_layers: 16
}
hardware {
  preset: "dgx-h100"
  nodes: 2
  scale_up { efficiency: 0.8 }
}
layout {
  tp: 2
  pp: 2
}
training {
  global_batch_size: 64
  seq_length: 4096
}
)txt";

// The same scenario as JSON, with one key in protobuf's camelCase JSON spelling.
constexpr const char* kJsonScenario = R"json({
  "name": "llama3-8b-2x-dgx-h100",
  "model": {
    "preset": "llama3-8b",
    "num_layers": 16
  },
  "hardware": {
    "preset": "dgx-h100",
    "nodes": 2,
    "scaleUp": { "efficiency": 0.8 }
  },
  "layout": {
    "tp": 2,
    "pp": 2
  },
  "training": {
    "global_batch_size": 64,
    "seq_length": 4096
  }
}
)json";

TEST(app_scenario_loader, TextScenarioMergesPresetsAndDefaults) {
  const config::LoadedScenario loaded =
      config::load_scenario_text(kTextScenario, "llama.textproto", {});
  const config::Scenario& s = loaded.scenario;

  // Written inline: wins over the preset.
  EXPECT_EQ(s.model().num_layers(), 16);
  EXPECT_DOUBLE_EQ(s.hardware().scale_up().efficiency(), 0.8);
  EXPECT_EQ(s.hardware().nodes(), 2);
  // Untouched preset fields stay.
  EXPECT_EQ(s.model().hidden_size(), 4096);
  EXPECT_EQ(s.model().num_heads(), 32);
  EXPECT_EQ(s.model().num_kv_heads(), 8);
  EXPECT_EQ(s.model().vocab_size(), 128256);
  EXPECT_EQ(s.model().activation(), config::Model::SWIGLU);
  EXPECT_DOUBLE_EQ(s.hardware().gpu().bf16_flops_per_s(), 989e12);
  EXPECT_DOUBLE_EQ(s.hardware().scale_up().bytes_per_s(), 450e9);
  EXPECT_DOUBLE_EQ(s.hardware().scale_out().nic_bits_per_s(), 400e9);
  // Defaults under the preset.
  EXPECT_DOUBLE_EQ(s.hardware().scale_up().latency_s(), 1.5e-6);
  EXPECT_DOUBLE_EQ(s.hardware().scale_out().efficiency(), 0.92);
  EXPECT_DOUBLE_EQ(s.hardware().compute().attention(), 0.60);
  // dgx-h100 uses the kernel model at the H100's cited achievable GEMM peak.
  EXPECT_EQ(s.hardware().compute().model(), config::ComputeEfficiency::KERNEL);
  EXPECT_DOUBLE_EQ(s.hardware().compute().gemm(), 0.801);
  EXPECT_EQ(s.hardware().gpu().sm_count(), 132);
  EXPECT_DOUBLE_EQ(s.hardware().collectives().base_latency_s(), 6e-6);
  EXPECT_EQ(s.hardware().gpus_per_node(), 8);
  // Derived and built-in defaults.
  EXPECT_EQ(s.model().head_dim(), 128);
  EXPECT_FALSE(s.model().tie_embeddings());
  EXPECT_EQ(s.layout().dp(), 4);  // 16 GPUs / (tp 2 x pp 2)
  EXPECT_EQ(s.layout().cp(), 1);
  EXPECT_EQ(s.layout().ep(), 1);
  EXPECT_EQ(s.layout().virtual_stages(), 1);
  EXPECT_FALSE(s.layout().sequence_parallel());
  EXPECT_EQ(s.training().micro_batch_size(), 1);
  EXPECT_EQ(s.training().recompute(), config::Training::NONE);
  EXPECT_EQ(s.training().schedule(), config::Training::ONE_F_ONE_B);
  EXPECT_EQ(s.training().dtype(), config::BF16);
  EXPECT_EQ(s.training().grad_reduce_dtype(), config::FP32);
  EXPECT_EQ(s.sim().fidelity(), config::Simulation::AUTO);  // the fast default (docs/speed.md)
}

TEST(app_scenario_loader, TextScenarioRecordsTheLineOfEveryField) {
  const config::LoadedScenario loaded =
      config::load_scenario_text(kTextScenario, "llama.textproto", {});
  const config::SourceMap& sources = loaded.sources;
  EXPECT_EQ(sources.file(), "llama.textproto");
  EXPECT_EQ(sources.find("name").line, 2);
  EXPECT_EQ(sources.find("model.num_layers").line, 5);
  EXPECT_EQ(sources.find("hardware.scale_up.efficiency").line, 10);
  EXPECT_EQ(sources.find("layout").line, 12);
  EXPECT_EQ(sources.find("layout.tp").line, 13);
  EXPECT_EQ(sources.find("layout.tp").file, "llama.textproto");
  EXPECT_EQ(sources.find("layout.tp").column, 3);
  EXPECT_EQ(sources.find("layout.pp").line, 14);
  // Not written: the closest ancestor that is, else the file.
  EXPECT_EQ(sources.find("layout.dp").line, 12);
  // Given by the model preset, not written: the preset, named.
  EXPECT_EQ(sources.find("model.hidden_size").file,
            "model preset 'llama3-8b' (inherited; set model.hidden_size to override it)");
  EXPECT_EQ(sources.find("model.hidden_size").line, 0);
  EXPECT_EQ(sources.find("model.preset").line, 4);
  const SourceLocation nowhere = sources.find("sim.fidelity");
  EXPECT_EQ(nowhere.file, "llama.textproto");
  EXPECT_EQ(nowhere.line, 0);
}

TEST(app_scenario_loader, JsonScenarioGivesTheSameScenario) {
  const config::LoadedScenario text =
      config::load_scenario_text(kTextScenario, "llama.textproto", {});
  const config::LoadedScenario json = config::load_scenario_text(kJsonScenario, "llama.json", {});
  std::string difference;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&difference);
  EXPECT_TRUE(differencer.Compare(text.scenario, json.scenario)) << difference;

  EXPECT_EQ(json.sources.find("layout.tp").line, 13);
  EXPECT_EQ(json.sources.find("layout.tp").file, "llama.json");
  EXPECT_EQ(json.sources.find("hardware.scale_up.efficiency").line, 10);  // "scaleUp"
  EXPECT_EQ(json.sources.find("model.num_layers").line, 5);
  EXPECT_EQ(json.sources.find("layout.dp").line, 12);
}

TEST(app_scenario_loader, JsonIsRecognisedByItsFirstCharacter) {
  const config::LoadedScenario json = config::load_scenario_text(kJsonScenario, "scenario.txt", {});
  EXPECT_EQ(json.scenario.layout().tp(), 2);
}

TEST(app_scenario_loader, TextUnknownFieldNamesFieldAndLine) {
  const Caught error = load_error("name: \"x\"\nlayout {\n  tp: 2\n  tpp: 3\n}\n");
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.tpp");
  EXPECT_EQ(error.where.file, "scenario.textproto");
  EXPECT_EQ(error.where.line, 4);
  EXPECT_NE(error.detail.find("valid fields of layout: tp, pp"), std::string::npos) << error.detail;
}

TEST(app_scenario_loader, TextUnknownTopLevelField) {
  const Caught error = load_error("name: \"x\"\n\nmodle { preset: \"llama3-8b\" }\n");
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "modle");
  EXPECT_EQ(error.where.line, 3);
}

TEST(app_scenario_loader, JsonUnknownFieldNamesFieldAndLine) {
  const Caught error =
      load_error("{\n  \"layout\": {\n    \"tp\": 2,\n    \"tpp\": 3\n  }\n}\n", "s.json");
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.tpp");
  EXPECT_EQ(error.where.file, "s.json");
  EXPECT_EQ(error.where.line, 4);
  EXPECT_NE(error.detail.find("unknown field 'tpp'"), std::string::npos) << error.detail;
}

TEST(app_scenario_loader, TextWrongTypeNamesFieldAndLine) {
  const Caught error = load_error("layout {\n  pp: 1\n  tp: \"x\"\n}\n");
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.tp");
  EXPECT_EQ(error.where.line, 3);
  EXPECT_EQ(error.where.column, 7);
  EXPECT_NE(error.detail.find("Expected integer"), std::string::npos) << error.detail;
}

TEST(app_scenario_loader, TextWrongTypeOnTheNextLineStillNamesTheField) {
  const Caught error =
      load_error("hardware {\n  scale_up {\n    bytes_per_s:\n      \"fast\"\n  }\n}\n");
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "hardware.scale_up.bytes_per_s");
  EXPECT_EQ(error.where.line, 4);
}

TEST(app_scenario_loader, TextUnknownEnumValueNamesTheField) {
  const Caught error = load_error("model {\n  activation: RELU\n}\n");
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "model.activation");
  EXPECT_EQ(error.where.line, 2);
}

TEST(app_scenario_loader, TextSyntaxErrorGivesALine) {
  const Caught unclosed = load_error("layout {\n  tp: 2\n");
  ASSERT_TRUE(unclosed.thrown);
  EXPECT_GT(unclosed.where.line, 0);
  EXPECT_EQ(unclosed.field, "layout");  // the message left open

  const Caught extra = load_error("layout {\n  tp: 2\n}\n}\n");
  ASSERT_TRUE(extra.thrown);
  EXPECT_EQ(extra.where.line, 4);
  EXPECT_EQ(extra.field, "");
}

TEST(app_scenario_loader, JsonWrongTypeNamesFieldAndLine) {
  const Caught error =
      load_error("{\n  \"layout\": {\n    \"pp\": 1,\n    \"tp\": \"x\"\n  }\n}\n", "s.json");
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.tp");
  EXPECT_EQ(error.where.line, 4);
  EXPECT_NE(error.detail.find("int32"), std::string::npos) << error.detail;
}

TEST(app_scenario_loader, JsonBadEnumListsTheValues) {
  const Caught error =
      load_error("{\n  \"training\": {\n    \"recompute\": \"SOMETIMES\"\n  }\n}\n", "s.json");
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "training.recompute");
  EXPECT_EQ(error.where.line, 3);
  EXPECT_NE(error.detail.find("NONE, SELECTIVE, FULL"), std::string::npos) << error.detail;
}

TEST(app_scenario_loader, JsonRepeatedKeyNamesTheSecond) {
  const Caught error =
      load_error("{\n  \"layout\": {\n    \"tp\": 2,\n    \"tp\": 4\n  }\n}\n", "s.json");
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.tp");
  EXPECT_EQ(error.where.line, 4);
}

TEST(app_scenario_loader, JsonSyntaxErrorGivesALine) {
  // A missing ':' found by protobuf, whose excerpt gives the offset.
  const Caught colon = load_error("{\n  \"layout\": {\n    \"tp\" 2\n  }\n}\n", "s.json");
  ASSERT_TRUE(colon.thrown);
  EXPECT_EQ(colon.where.line, 3);
  EXPECT_NE(colon.detail.find("JSON syntax error"), std::string::npos) << colon.detail;

  // The text ends early: protobuf has no excerpt, the scanner finds the open brace.
  const Caught unclosed = load_error("{\n  \"layout\": {\n    \"tp\": 2\n  }\n", "s.json");
  ASSERT_TRUE(unclosed.thrown);
  EXPECT_EQ(unclosed.where.line, 1);

  const Caught trailing = load_error("{\n  \"layout\": {\"tp\": 2}\n}\n\n}\n", "s.json");
  ASSERT_TRUE(trailing.thrown);
  EXPECT_EQ(trailing.where.line, 5);
}

TEST(app_scenario_loader, ProductOfLayoutMustMatchGpusWhenDpIsWritten) {
  const Caught error = load_error(small_scenario("  tp: 2\n  dp: 3\n"));
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.dp");
  EXPECT_EQ(error.where.line, 9);
  EXPECT_NE(error.detail.find("= 6"), std::string::npos) << error.detail;
  EXPECT_NE(error.detail.find("8 GPUs"), std::string::npos) << error.detail;
}

TEST(app_scenario_loader, ProductOfLayoutMustDivideGpus) {
  const Caught error = load_error(small_scenario("  pp: 1\n  tp: 3\n"));
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.tp");
  EXPECT_EQ(error.where.line, 9);
  EXPECT_NE(error.detail.find("8 GPUs"), std::string::npos) << error.detail;
}

TEST(app_scenario_loader, LayoutErrorPointsAtTheAncestorWhenTheFieldIsNotWritten) {
  // tp is not written, so the error points at the layout section.
  const Caught error = load_error(small_scenario("  pp: 3\n"));
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.tp");
  EXPECT_EQ(error.where.line, 7);
}

TEST(app_scenario_loader, HeadsMustDivideByTp) {
  const Caught error = load_error(R"txt(model {
  preset: "llama3-8b"
  num_heads: 12
  num_kv_heads: 12
  hidden_size: 768
}
hardware { preset: "dgx-h100" }
training { global_batch_size: 8 seq_length: 2048 }
layout {
  tp: 8
}
)txt");
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.tp");
  EXPECT_EQ(error.where.line, 10);
  EXPECT_NE(error.detail.find("num_heads 12"), std::string::npos) << error.detail;
}

TEST(app_scenario_loader, KvHeadsMustDivideByTp) {
  // llama3-8b: 32 heads but 8 KV heads; tp 16 over two nodes.
  const Caught error =
      load_error(small_scenario("  tp: 16\n"), "scenario.textproto", {"hardware.nodes=2"});
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.tp");
  EXPECT_EQ(error.where.line, 8);
  EXPECT_NE(error.detail.find("num_kv_heads 8"), std::string::npos) << error.detail;
}

TEST(app_scenario_loader, LayersMustDivideByPp) {
  // llama3-8b has 32 layers; 3 nodes of 8 GPUs take tp 8 x pp 3.
  const Caught error = load_error(small_scenario("  tp: 8\n  pp: 3\n"), "scenario.textproto",
                                  {"hardware.nodes=3", "training.global_batch_size=3"});
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.pp");
  EXPECT_EQ(error.where.line, 9);
  EXPECT_NE(error.detail.find("num_layers 32"), std::string::npos) << error.detail;
}

TEST(app_scenario_loader, GlobalBatchMustDivideByMicroBatchTimesDp) {
  // tp 2 on 8 GPUs: dp 4, micro-batch 1; 16 sequences fit but 10 do not.
  const Caught error = load_error(small_scenario("  tp: 2\n"), "scenario.textproto",
                                  {"training.global_batch_size=10"});
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "training.global_batch_size");
  EXPECT_EQ(error.where.file, "--set training.global_batch_size=10");

  std::string text = small_scenario("  tp: 2\n");
  text.replace(text.find("global_batch_size: 16"), 21, "global_batch_size: 10");
  const Caught written = load_error(text);
  ASSERT_TRUE(written.thrown);
  EXPECT_EQ(written.field, "training.global_batch_size");
  EXPECT_EQ(written.where.line, 4);
  EXPECT_NE(written.detail.find("1 x 4 = 4"), std::string::npos) << written.detail;
}

TEST(app_scenario_loader, RequiredValuesAreReported) {
  const Caught error =
      load_error("hardware { preset: \"dgx-h100\" }\nmodel {\n  hidden_size: 1024\n}\n");
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "model.num_layers");
  EXPECT_EQ(error.where.line, 2);

  const Caught negative = load_error(small_scenario("", "sim { fidelity: AGGREGATED }\n"),
                                     "scenario.textproto", {"hardware.scale_up.efficiency=1.5"});
  ASSERT_TRUE(negative.thrown);
  EXPECT_EQ(negative.field, "hardware.scale_up.efficiency");
}

TEST(app_scenario_loader, FeaturesNeedTheirPrerequisites) {
  // Expert parallelism needs experts; virtual stages need the interleaved schedule.
  const Caught ep = load_error(small_scenario(""), "scenario.textproto", {"layout.ep=2"});
  ASSERT_TRUE(ep.thrown);
  EXPECT_EQ(ep.field, "layout.ep");
  EXPECT_NE(ep.detail.find("experts"), std::string::npos) << ep.detail;
  const Caught vp =
      load_error(small_scenario(""), "scenario.textproto", {"layout.virtual_stages=2"});
  ASSERT_TRUE(vp.thrown);
  EXPECT_EQ(vp.field, "layout.virtual_stages");
  EXPECT_NE(vp.detail.find("INTERLEAVED_1F1B"), std::string::npos) << vp.detail;
  EXPECT_NO_THROW(
      config::load_scenario_text(small_scenario(""), "s", {"training.schedule=INTERLEAVED_1F1B"}));
  EXPECT_NO_THROW(
      config::load_scenario_text(small_scenario(""), "s", {"training.offload_activations=true"}));
  // FP8 on a GPU without it.
  const Caught fp8 = load_error(small_scenario(""), "scenario.textproto",
                                {"hardware.preset=dgx-a100", "training.dtype=FP8"});
  ASSERT_TRUE(fp8.thrown);
  EXPECT_EQ(fp8.field, "training.dtype");
  EXPECT_NE(fp8.detail.find("not supported"), std::string::npos) << fp8.detail;
  // and accepted on one that has it.
  EXPECT_NO_THROW(config::load_scenario_text(small_scenario(""), "s", {"training.dtype=FP8"}));
}

// Node-limited routing, a deduplicated dispatch without a sample and the SMs communication
// holds: each wrong value names its field.
TEST(app_scenario_loader, RoutingGroupsDedupAndReservedSms) {
  const std::vector<std::string> deepseek = {"model.preset=deepseek-v3", "layout.ep=8",
                                             "training.seq_length=4096"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = deepseek;
    all.insert(all.end(), extra.begin(), extra.end());
    return load_error(small_scenario(""), "scenario.textproto", all);
  };
  EXPECT_FALSE(with({"expert_placement.node_dedup_dispatch=true"}).thrown)
      << with({"expert_placement.node_dedup_dispatch=true"}).detail;
  const Caught groups = with({"model.moe_expert_groups=7"});
  EXPECT_EQ(groups.field, "model.moe_expert_groups");
  EXPECT_NE(groups.detail.find("equal groups"), std::string::npos) << groups.detail;
  const Caught per_token = with({"model.moe_groups_per_token=9"});
  EXPECT_EQ(per_token.field, "model.moe_groups_per_token");
  const Caught too_few = with({"model.moe_groups_per_token=0"});
  EXPECT_EQ(too_few.field, "model.moe_groups_per_token");
  const Caught skewed = with({"expert_placement.node_dedup_dispatch=true", "training.routing=ZIPF",
                              "training.routing_zipf_exponent=1"});
  EXPECT_EQ(skewed.field, "expert_placement.node_dedup_dispatch");
  EXPECT_NE(skewed.detail.find("BALANCED"), std::string::npos) << skewed.detail;
  const Caught sms = with({"hardware.compute.comm_reserved_sms=132"});
  EXPECT_EQ(sms.field, "hardware.compute.comm_reserved_sms");
  EXPECT_NE(sms.detail.find("[0, 132)"), std::string::npos) << sms.detail;
  EXPECT_FALSE(with({"hardware.compute.comm_reserved_sms=20"}).thrown);
  const Caught certain = with({"model.hidden_dropout=1"});
  EXPECT_EQ(certain.field, "model.hidden_dropout");
  EXPECT_NE(certain.detail.find("[0, 1)"), std::string::npos) << certain.detail;
  EXPECT_EQ(with({"model.hidden_dropout=-0.1"}).field, "model.hidden_dropout");
  EXPECT_FALSE(with({"model.hidden_dropout=0.1"}).thrown);
}

// The error (if any) of the small scenario with one `--set` override.
Caught with(const std::string& set) {
  return load_error(small_scenario(""), "scenario.textproto", {set});
}

// FP8 GEMMs' own fraction and per-tile cost: a fraction in [0.01, 1], K elements >= 0.
TEST(app_scenario_loader, Fp8GemmRateFields) {
  const Caught above_one = with("hardware.compute.gemm_fp8=1.2");
  EXPECT_EQ(above_one.field, "hardware.compute.gemm_fp8");
  EXPECT_NE(above_one.detail.find("[0.01, 1]"), std::string::npos) << above_one.detail;
  EXPECT_EQ(with("hardware.compute.gemm_fp8=-0.5").field, "hardware.compute.gemm_fp8");
  const Caught overhead = with("hardware.compute.gemm_fp8_k_overhead=-1");
  EXPECT_EQ(overhead.field, "hardware.compute.gemm_fp8_k_overhead");
  EXPECT_EQ(with("hardware.compute.gemm_k_overhead=nan").field, "hardware.compute.gemm_k_overhead");
  const Caught huge = with("hardware.compute.gemm_k_overhead=1e9");  // a step of 2.3e5 s before
  EXPECT_EQ(huge.field, "hardware.compute.gemm_k_overhead");
  EXPECT_NE(huge.detail.find("[0, 1e6]"), std::string::npos) << huge.detail;
  EXPECT_FALSE(with("hardware.compute.gemm_fp8=0.7").thrown);
  EXPECT_FALSE(with("hardware.compute.gemm_fp8_k_overhead=500").thrown);
}

// The GEMM ceiling is a fraction of the peak; split-K a number of splits in [0, 64].
TEST(app_scenario_loader, GemmCeilingAndSplitKFields) {
  const Caught ceiling = with("hardware.compute.gemm_sustained=1.5");
  EXPECT_EQ(ceiling.field, "hardware.compute.gemm_sustained");
  EXPECT_NE(ceiling.detail.find("[0.01, 1]"), std::string::npos) << ceiling.detail;
  EXPECT_EQ(with("hardware.compute.gemm_sustained=-0.1").field, "hardware.compute.gemm_sustained");
  EXPECT_EQ(with("hardware.compute.gemm_split_k_max=-2").field,
            "hardware.compute.gemm_split_k_max");
  const Caught splits = with("hardware.compute.gemm_split_k_max=65");
  EXPECT_EQ(splits.field, "hardware.compute.gemm_split_k_max");
  EXPECT_NE(splits.detail.find("[0, 64]"), std::string::npos) << splits.detail;
  // The scenario's Hopper preset holds its power limit as a clock ratio: a ceiling replaces it.
  EXPECT_FALSE(load_error(small_scenario(""), "scenario.textproto",
                          {"hardware.compute.gemm_sustained=0.859",
                           "hardware.compute.sustained_clock_ratio=1"})
                   .thrown);
  EXPECT_FALSE(with("hardware.compute.gemm_split_k_max=8").thrown);
}

// Deferring the output layer's weight gradients into the pipeline's drain needs a pipeline (as
// Megatron-Core's ModelParallelConfig checks); its limit is a count of micro-batches, inert
// without the flag as in Megatron-Core.
TEST(app_scenario_loader, EmbeddingWgradDeferralFields) {
  const Caught no_pipeline = with("training.defer_embedding_wgrad=true");  // pp 1
  EXPECT_EQ(no_pipeline.field, "training.defer_embedding_wgrad");
  EXPECT_NE(no_pipeline.detail.find("layout.pp > 1"), std::string::npos) << no_pipeline.detail;
  const std::string pipelined = small_scenario("  pp: 2\n");
  const Caught below_zero =
      load_error(pipelined, "scenario.textproto",
                 {"training.defer_embedding_wgrad=true", "training.wgrad_deferral_limit=-1"});
  EXPECT_EQ(below_zero.field, "training.wgrad_deferral_limit");
  EXPECT_FALSE(
      load_error(pipelined, "scenario.textproto",
                 {"training.defer_embedding_wgrad=true", "training.wgrad_deferral_limit=22"})
          .thrown);
  EXPECT_FALSE(
      load_error(pipelined, "scenario.textproto", {"training.wgrad_deferral_limit=22"}).thrown);
}

// DeepSpeed's exchange is DeepSpeed's own 1F1B with blocking transfers: another schedule, sends
// overlapped with compute or MTP modules are refused, naming the field.
TEST(app_scenario_loader, DeepSpeedPipelineExchangeField) {
  const std::string pipelined = small_scenario("  pp: 2\n");
  auto exchange_with = [&](std::vector<std::string> overrides) {
    overrides.push_back("training.pipeline_exchange=DEEPSPEED");
    return load_error(pipelined, "scenario.textproto", overrides);
  };
  EXPECT_FALSE(exchange_with({}).thrown);
  const Caught gpipe = exchange_with({"training.schedule=GPIPE"});
  EXPECT_EQ(gpipe.field, "training.pipeline_exchange");
  EXPECT_NE(gpipe.detail.find("ONE_F_ONE_B"), std::string::npos) << gpipe.detail;
  const Caught overlapped = exchange_with({"training.pp_comm_overlap=true"});
  EXPECT_EQ(overlapped.field, "training.pipeline_exchange");
  EXPECT_NE(overlapped.detail.find("training.pp_comm_overlap"), std::string::npos)
      << overlapped.detail;
}

// How FP8 training keeps its activations is refused for another dtype, naming the field.
TEST(app_scenario_loader, Fp8ActivationsField) {
  const Caught bf16 = with("training.fp8_activations=LINEAR_INPUTS");
  EXPECT_EQ(bf16.field, "training.fp8_activations");
  EXPECT_NE(bf16.detail.find("BF16"), std::string::npos) << bf16.detail;
  EXPECT_NO_THROW(config::load_scenario_text(
      small_scenario(""), "s", {"training.dtype=FP8", "training.fp8_activations=LINEAR_INPUTS"}));
}

// How rotary embeddings run is refused for a model without them, naming the field and the
// model's encoding; the Llama preset takes it.
TEST(app_scenario_loader, RotaryImplField) {
  const Caught learned = load_error(
      small_scenario(""), "scenario.textproto",
      {"model.position_encoding=LEARNED_ABSOLUTE", "training.rotary_impl=ROTARY_COMPLEX_FP32"});
  EXPECT_EQ(learned.field, "training.rotary_impl");
  EXPECT_NE(learned.detail.find("LEARNED_ABSOLUTE"), std::string::npos) << learned.detail;
  EXPECT_NO_THROW(config::load_scenario_text(small_scenario(""), "s",
                                             {"training.rotary_impl=ROTARY_COMPLEX_FP32"}));
}

// FP8 parameters need FP8 training and a sharded optimizer; each refusal names the field. The
// megatron-bridge framework turns them on for FP8 only where the optimizer is sharded.
TEST(app_scenario_loader, Fp8ParamGatherField) {
  const Caught bf16 = with("training.fp8_param_gather=true");
  EXPECT_EQ(bf16.field, "training.fp8_param_gather");
  EXPECT_NE(bf16.detail.find("BF16"), std::string::npos) << bf16.detail;
  const Caught unsharded =
      load_error(small_scenario(""), "scenario.textproto",
                 {"training.dtype=FP8", "training.zero_stage=0", "training.fp8_param_gather=true"});
  EXPECT_EQ(unsharded.field, "training.fp8_param_gather");
  EXPECT_NE(unsharded.detail.find("zero_stage"), std::string::npos) << unsharded.detail;
  const auto bridge = [](std::vector<std::string> sets) {
    sets.push_back("training.framework=megatron-bridge");
    return config::load_scenario_text(small_scenario(""), "s", sets).scenario.training();
  };
  EXPECT_TRUE(bridge({"training.dtype=FP8"}).fp8_param_gather());
  EXPECT_FALSE(bridge({"training.dtype=FP8", "training.zero_stage=0"}).fp8_param_gather());
  EXPECT_FALSE(bridge({}).fp8_param_gather());  // BF16
}

// Overlapping the parameter gather needs a sharded optimizer that gathers after its update.
TEST(app_scenario_loader, OverlapParamGatherField) {
  const Caught unsharded = with("training.overlap_param_gather=true");
  EXPECT_EQ(unsharded.field, "training.overlap_param_gather");
  EXPECT_NE(unsharded.detail.find("zero_stage is 0"), std::string::npos) << unsharded.detail;
  const Caught fsdp = load_error(small_scenario(""), "scenario.textproto",
                                 {"training.zero_stage=3", "training.overlap_param_gather=true"});
  EXPECT_EQ(fsdp.field, "training.overlap_param_gather");
  EXPECT_NO_THROW(config::load_scenario_text(
      small_scenario(""), "s", {"training.zero_stage=1", "training.overlap_param_gather=true"}));
  const auto bridge =
      config::load_scenario_text(small_scenario(""), "s", {"training.framework=megatron-bridge"});
  EXPECT_TRUE(bridge.scenario.training().overlap_param_gather());
}

// The sustained clock is a fraction of the measured one; with the GEMM ceiling, which holds the
// same drop for full-wave GEMMs, it would count the power limit twice.
TEST(app_scenario_loader, SustainedClockRatioField) {
  const Caught above_one = with("hardware.compute.sustained_clock_ratio=1.2");
  EXPECT_EQ(above_one.field, "hardware.compute.sustained_clock_ratio");
  EXPECT_NE(above_one.detail.find("[0.01, 1]"), std::string::npos) << above_one.detail;
  EXPECT_EQ(with("hardware.compute.sustained_clock_ratio=0").field,
            "hardware.compute.sustained_clock_ratio");
  // Below 1 % of the clock is no hardware figure (1e-300 gave a step of 1e300 s), for every
  // fraction alike.
  EXPECT_EQ(with("hardware.compute.sustained_clock_ratio=1e-300").field,
            "hardware.compute.sustained_clock_ratio");
  EXPECT_EQ(with("hardware.compute.gemm=0.009").field, "hardware.compute.gemm");
  EXPECT_FALSE(with("hardware.compute.gemm=0.01").thrown);
  EXPECT_FALSE(with("hardware.compute.sustained_clock_ratio=0.795").thrown);
  const Caught both = load_error(
      small_scenario(""), "scenario.textproto",
      {"hardware.compute.gemm_sustained=0.76", "hardware.compute.sustained_clock_ratio=0.795"});
  EXPECT_EQ(both.field, "hardware.compute.sustained_clock_ratio");
  EXPECT_NE(both.detail.find("gemm_sustained"), std::string::npos) << both.detail;
  // The Hopper presets set the ratio (0.862, measured on an H200): a ceiling alone meets it, and
  // the error says how to keep the ceiling.
  const Caught ceiling_on_hopper = with("hardware.compute.gemm_sustained=0.76");
  EXPECT_EQ(ceiling_on_hopper.field, "hardware.compute.sustained_clock_ratio");
  EXPECT_NE(ceiling_on_hopper.detail.find("give it 1"), std::string::npos)
      << ceiling_on_hopper.detail;
  EXPECT_FALSE(load_error(small_scenario(""), "scenario.textproto",
                          {"hardware.compute.gemm_sustained=0.76",
                           "hardware.compute.sustained_clock_ratio=1"})
                   .thrown);
}

TEST(app_scenario_loader, LoadsFromAFile) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("racksim-loader-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path text_path = dir / "llama.textproto";
  const std::filesystem::path json_path = dir / "llama.json";
  std::ofstream(text_path) << kTextScenario;
  std::ofstream(json_path) << kJsonScenario;

  const config::LoadedScenario text = config::load_scenario(text_path.string(), {"layout.pp=4"});
  EXPECT_EQ(text.scenario.layout().pp(), 4);
  EXPECT_EQ(text.sources.find("layout.tp").file, text_path.string());
  const config::LoadedScenario json = config::load_scenario(json_path.string(), {});
  EXPECT_EQ(json.scenario.layout().dp(), 4);

  const std::string missing = (dir / "missing.textproto").string();
  const Caught error = catch_input_error([&] { config::load_scenario(missing, {}); });
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.where.file, missing);
  EXPECT_NE(std::string(InputError(error.where, error.field, error.detail).what()).find(missing),
            std::string::npos);

  const Caught directory = catch_input_error([&] { config::load_scenario(dir.string(), {}); });
  ASSERT_TRUE(directory.thrown);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace racksim::config
