// Scenario loading, continued (config_scenario_loader_test.cpp has parsing and the checks): --set
// overrides, presets, the JSON scanner, and errors on fields a preset or an override wrote.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "config/fraction_fields.h"
#include "config/json_locations.h"
#include "config/scenario_loader.h"
#include "tests/support/scenario_errors.h"
#include "topologies/hardware_presets.h"
#include "workloads/model/model_presets.h"

namespace racksim::config {
namespace {

TEST(app_scenario_loader, OverridesSetIntEnumDoubleAndPreset) {
  const config::LoadedScenario loaded = config::load_scenario_text(
      small_scenario("  tp: 2\n"), "s.textproto",
      {"layout.tp=4", "training.recompute=FULL", "hardware.scale_up.efficiency=0.7",
       "model.preset=llama3-70b", "layout.sequence_parallel=true", "layout.pp=2"});
  const config::Scenario& s = loaded.scenario;
  EXPECT_EQ(s.layout().tp(), 4);
  EXPECT_EQ(s.layout().pp(), 2);
  EXPECT_EQ(s.layout().dp(), 1);
  EXPECT_EQ(s.training().recompute(), config::Training::FULL);
  EXPECT_DOUBLE_EQ(s.hardware().scale_up().efficiency(), 0.7);
  EXPECT_DOUBLE_EQ(s.hardware().scale_up().bytes_per_s(), 450e9);
  EXPECT_EQ(s.model().preset(), "llama3-70b");
  EXPECT_EQ(s.model().hidden_size(), 8192);
  EXPECT_EQ(s.model().num_layers(), 80);
  EXPECT_TRUE(s.layout().sequence_parallel());

  const SourceLocation tp = loaded.sources.find("layout.tp");
  EXPECT_EQ(tp.file, "--set layout.tp=4");
  EXPECT_EQ(tp.line, 0);
  EXPECT_EQ(loaded.sources.find("layout.cp").line, 7);  // still the file's layout section
}

TEST(app_scenario_loader, OverrideOfAnUnsetSectionWorks) {
  config::Scenario scenario;
  config::SourceMap sources;
  config::apply_override("sim.fidelity=AGGREGATED", &scenario, &sources);
  config::apply_override("hardware.gpu.name=my-gpu", &scenario, &sources);
  config::apply_override("training.pp_comm_overlap=1", &scenario, &sources);
  EXPECT_EQ(scenario.sim().fidelity(), config::Simulation::AGGREGATED);
  EXPECT_EQ(scenario.hardware().gpu().name(), "my-gpu");
  EXPECT_TRUE(scenario.training().pp_comm_overlap());
  EXPECT_EQ(sources.find("hardware.gpu.name").file, "--set hardware.gpu.name=my-gpu");
}

TEST(app_scenario_loader, BadOverridesNameThePath) {
  struct Case {
    std::string assignment;
    std::string field;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"layout.tpp=4", "layout.tpp", "valid fields of layout: tp, pp, cp"},
      {"layuot.tp=4", "layuot.tp", "valid fields of the scenario: name"},
      {"layout.tp=x", "layout.tp", "'x' is not a valid value"},
      {"layout.tp=2.5", "layout.tp", "integer"},
      {"layout.tp=", "layout.tp", "not a valid value"},
      {"layout=4", "layout", "is a message"},
      {"layout.tp.x=4", "layout.tp.x", "has no fields"},
      {"layout.tp", "layout.tp", "expected path=value"},
      {"training.recompute=SOMETIMES", "training.recompute", "NONE, SELECTIVE, FULL"},
      {"layout.sequence_parallel=maybe", "layout.sequence_parallel", "true, false"},
      {"hardware.gpu.hbm_bytes=lots", "hardware.gpu.hbm_bytes", "number"},
  };
  for (const Case& c : cases) {
    config::Scenario scenario;
    config::SourceMap sources;
    const Caught error =
        catch_input_error([&] { config::apply_override(c.assignment, &scenario, &sources); });
    ASSERT_TRUE(error.thrown) << c.assignment;
    EXPECT_EQ(error.where.file, "--set") << c.assignment;
    EXPECT_EQ(error.where.line, 0) << c.assignment;
    EXPECT_EQ(error.field, c.field) << c.assignment;
    EXPECT_NE(error.detail.find(c.says), std::string::npos) << c.assignment << ": " << error.detail;
  }
}

TEST(app_scenario_loader, UnknownPresetListsTheKnownNames) {
  const Caught model =
      load_error("training { seq_length: 2048 }\nmodel {\n  preset: \"llama9\"\n}\n");
  ASSERT_TRUE(model.thrown);
  EXPECT_EQ(model.field, "model.preset");
  EXPECT_EQ(model.where.line, 3);
  EXPECT_NE(model.detail.find("llama3-8b"), std::string::npos) << model.detail;

  const Caught hardware =
      load_error(small_scenario(""), "s.textproto", {"hardware.preset=dgx-z100"});
  ASSERT_TRUE(hardware.thrown);
  EXPECT_EQ(hardware.field, "hardware.preset");
  EXPECT_EQ(hardware.where.file, "--set hardware.preset=dgx-z100");
  EXPECT_NE(hardware.detail.find("dgx-h100"), std::string::npos) << hardware.detail;
}

TEST(app_scenario_loader, EveryPresetResolvesAndValidates) {
  ASSERT_EQ(model_preset_names().size(), 10u);
  ASSERT_EQ(topo::hardware_preset_names().size(), 11u);
  for (const std::string& model : model_preset_names()) {
    // Qwen3's 4 KV heads split at most 4 ways.
    const int tp = model.starts_with("qwen3") ? 4 : 8;
    for (const std::string& hardware : topo::hardware_preset_names()) {
      const std::string text = "model { preset: \"" + model + "\" }\nhardware { preset: \"" +
                               hardware + "\" }\nlayout { tp: " + std::to_string(tp) +
                               " sequence_parallel: true }\n"
                               "training { global_batch_size: 72 seq_length: 2048 }\n";
      try {
        const config::LoadedScenario loaded = config::load_scenario_text(text, "s.textproto", {});
        // Presets hold one node (8 GPUs), an NVL72 rack (72) or the seed's 4 nodes (32).
        const auto& hw = loaded.scenario.hardware();
        EXPECT_EQ(loaded.scenario.layout().dp(), hw.nodes() * hw.gpus_per_node() / tp);
        EXPECT_TRUE(loaded.scenario.model().has_source());
        EXPECT_TRUE(loaded.scenario.hardware().has_source());
      } catch (const InputError& error) {
        ADD_FAILURE() << model << " on " << hardware << ": " << error.what();
      }
    }
  }
}

// Every field of the shared fraction table (config/fraction_fields.h, which calibrate's bounds
// follow) is one the validator refuses outside [0.01, 1], naming that field; and a count that
// calibrate once took for a fraction by its name is not in the table.
TEST(app_scenario_loader, EveryFractionFieldIsRefusedAboveOne) {
  for (std::string_view field : kFractionFields) {
    const std::string set = std::string(field) + "=1.5";
    try {
      config::load_scenario_text(small_scenario("  tp: 8\n"), "s.textproto", {set});
      ADD_FAILURE() << set << " was accepted";
    } catch (const InputError& error) {
      EXPECT_EQ(error.field(), field) << error.what();
      EXPECT_NE(error.detail().find("[0.01, 1]"), std::string::npos) << error.what();
    }
  }
  EXPECT_FALSE(is_fraction_field("hardware.compute.comm_reserved_sms"));
  EXPECT_FALSE(is_fraction_field("hardware.compute.gemm_split_k_max"));
  EXPECT_TRUE(is_fraction_field("hardware.compute.gemm_sustained"));
}

TEST(app_scenario_loader, PresetFigures) {
  const auto a100 = topo::hardware_preset("dgx-a100");
  ASSERT_TRUE(a100.has_value());
  EXPECT_FALSE(a100->gpu().has_fp8_flops_per_s());
  EXPECT_DOUBLE_EQ(a100->gpu().bf16_flops_per_s(), 312e12);
  EXPECT_EQ(a100->pcie().generation(), 4);
  EXPECT_DOUBLE_EQ(a100->scale_out().nic_bits_per_s(), 200e9);
  EXPECT_DOUBLE_EQ(a100->compute().hbm(), 0.85);  // defaults included

  const auto b300 = topo::hardware_preset("hgx-b300");
  ASSERT_TRUE(b300.has_value());
  EXPECT_DOUBLE_EQ(b300->gpu().hbm_bytes(), 275040.0 * 1024 * 1024);  // nvidia-smi MiB
  EXPECT_DOUBLE_EQ(b300->scale_out().nic_bits_per_s(), 800e9);
  EXPECT_EQ(b300->pcie().generation(), 6);

  EXPECT_DOUBLE_EQ(topo::hardware_preset("hgx-h800")->scale_up().bytes_per_s(), 200e9);
  EXPECT_DOUBLE_EQ(topo::hardware_preset("dgx-h200")->gpu().hbm_bytes_per_s(), 4.8e12);
  EXPECT_FALSE(topo::hardware_preset("dgx-z100").has_value());
  EXPECT_EQ(topo::hardware_defaults().scale_out().nodes_per_leaf(), 32);

  const auto gpt3 = model_preset("gpt3-175b");
  ASSERT_TRUE(gpt3.has_value());
  EXPECT_EQ(gpt3->activation(), config::Model::GELU);
  EXPECT_TRUE(gpt3->tie_embeddings());
  EXPECT_EQ(gpt3->vocab_size(), 51200);
  EXPECT_EQ(model_preset("llama3-405b")->num_layers(), 126);
  EXPECT_FALSE(model_preset("llama9").has_value());
}

TEST(app_scenario_loader, JsonScannerTracksNestingStringsAndArrays) {
  const config::JsonScan scan = config::scan_json_keys(
      "{\n"
      "  \"name\": \"a \\\"quoted\\\" {brace\",\n"
      "  \"hardware\": {\"gpu\": {\"bf16FlopsPerS\": 1},\n"
      "    \"list\": [{\"inner\": 1}, [2, 3]],\n"
      "    \"after\": 2}\n"
      "}\n",
      config::Scenario::descriptor());
  EXPECT_EQ(scan.unbalanced_line, 0);
  std::vector<std::string> paths;
  for (const config::JsonKey& key : scan.keys)
    paths.push_back(key.path + ":" + std::to_string(key.line));
  EXPECT_EQ(paths, (std::vector<std::string>{"name:2", "hardware:3", "hardware.gpu:3",
                                             "hardware.gpu.bf16_flops_per_s:3", "hardware.list:4",
                                             "hardware.after:5"}));

  const config::JsonScan mismatched = config::scan_json_keys("{\n \"a\": [1,\n 2}\n", nullptr);
  EXPECT_EQ(mismatched.unbalanced_line, 3);
}

}  // namespace
}  // namespace racksim::config

namespace racksim::config {
namespace {

TEST(app_scenario_loader, InferenceSectionErrorsNameFieldAndLine) {
  const Caught batch = load_error(small_scenario("  tp: 8\n", "inference {\n  batch: 0\n}\n"));
  ASSERT_TRUE(batch.thrown);
  EXPECT_EQ(batch.field, "inference.batch");
  EXPECT_EQ(batch.where.line, 11);
  const Caught price =
      load_error(small_scenario("  tp: 8\n", "inference { gpu_hour_price: -1 }\n"));
  ASSERT_TRUE(price.thrown);
  EXPECT_EQ(price.field, "inference.gpu_hour_price");
  const Caught cp = load_error(small_scenario("  tp: 4\n  cp: 2\n", "inference { batch: 8 }\n"));
  ASSERT_TRUE(cp.thrown);
  EXPECT_EQ(cp.field, "layout.cp");
  EXPECT_NE(cp.detail.find("context parallelism"), std::string::npos) << cp.detail;
  EXPECT_NO_THROW(
      config::load_scenario_text(small_scenario("  tp: 8\n", "inference { batch: 8 }\n"), "s", {}));
}

}  // namespace
}  // namespace racksim::config

namespace racksim::config {
namespace {

TEST(app_scenario_loader, PinnedFirstStageWithAnotherPpFromSetNamesBothFields) {
  // 32 layers: 8 + 24 for pp 2 in the file; --set layout.pp=4 would give 8 + 8 + 8 + 8 by
  // luck, and 22 + 7 + 7 + 7 for other pins: the pin was made for pp 2, so it is an error.
  const std::string text = small_scenario("  pp: 2\n  first_stage_layers: 8\n");
  ASSERT_FALSE(load_error(text).thrown);
  const Caught error = load_error(text, "scenario.textproto", {"layout.pp=4"});
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.first_stage_layers");
  EXPECT_EQ(error.where.line, 9);
  EXPECT_NE(error.detail.find("layout.pp=4"), std::string::npos) << error.detail;
  EXPECT_NE(error.detail.find("layout.pp 2"), std::string::npos) << error.detail;
  // Restating the pin (or 0 for equal stages) with the new pp is fine.
  EXPECT_FALSE(load_error(text, "s", {"layout.pp=4", "layout.first_stage_layers=0"}).thrown);
}

// The file `text` loads; with --set `field`=`value` it fails, naming that override.
void expect_override_named(const std::string& text, const std::string& field,
                           const std::string& value) {
  ASSERT_FALSE(load_error(text).thrown);
  const Caught error = load_error(text, "s", {field + "=" + value});
  ASSERT_TRUE(error.thrown) << field;
  EXPECT_EQ(error.field, field) << error.detail;
  EXPECT_EQ(error.where.file, "--set " + field + "=" + value);
}

TEST(app_scenario_loader, ALayoutThatNoLongerFitsNamesTheOverrideThatBrokeIt) {
  // The file's tp 2 x pp 2 fits 8 GPUs; --set layout.pp=3 does not. The error names the
  // override, not the file's tp line the user did not change; without an override it names tp.
  expect_override_named(small_scenario("  tp: 2\n  pp: 2\n"), "layout.pp", "3");
  const Caught in_file = load_error(small_scenario("  tp: 2\n  pp: 3\n"));
  ASSERT_TRUE(in_file.thrown);
  EXPECT_EQ(in_file.field, "layout.tp");
  EXPECT_EQ(in_file.where.line, 8);
  // With dp written in the file, a --set of tp that breaks the product is named too.
  expect_override_named(small_scenario("  tp: 2\n  dp: 4\n"), "layout.tp", "4");
}

TEST(app_scenario_loader, AnOverrideThatBreaksARuleWithTheFilesFieldsIsTheFieldNamed) {
  // Each rule below holds for the file; the override breaks it and is what the error names.
  struct Case {
    std::string layout, assignment, field;
  };
  const Case cases[] = {
      {"  tp: 2\n", "training.micro_batch_size=3", "training.micro_batch_size"},  // 16 % (3 x 4)
      {"  pp: 2\n", "model.num_layers=31", "model.num_layers"},                   // 31 % 2
      {"  cp: 2\n", "training.seq_length=2047", "training.seq_length"},           // 2,047 % 2
      // ... unless the other field came from a preset: that one is named, with the preset.
      {"  tp: 2\n", "model.num_heads=30", "model.num_kv_heads"},  // 30 % 8 KV heads
  };
  for (const auto& [layout, assignment, field] : cases) {
    ASSERT_FALSE(load_error(small_scenario(layout)).thrown) << layout;
    const Caught error = load_error(small_scenario(layout), "s", {assignment});
    ASSERT_TRUE(error.thrown) << assignment;
    EXPECT_EQ(error.field, field) << assignment << ": " << error.detail;
  }
}

TEST(app_scenario_loader, ContextParallelismWithMaterializedAttentionIsAnInputError) {
  // It used to pass validation and stop in the attention ledger as an internal error.
  const std::string text = small_scenario("  tp: 2\n");
  const std::string materialized = "training.attention_impl=MATERIALIZED";
  ASSERT_FALSE(load_error(text, "s", {materialized}).thrown);
  ASSERT_FALSE(load_error(text, "s", {"layout.cp=2"}).thrown);
  const Caught error = load_error(text, "s", {materialized, "layout.cp=2"});
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "layout.cp");
  EXPECT_NE(error.detail.find("MATERIALIZED"), std::string::npos) << error.detail;
  EXPECT_EQ(error.detail.find("framework"), std::string::npos) << error.detail;
  // Where the framework chose the attention, the error says so.
  const Caught framework =
      load_error(text, "s", {"training.framework=megatron-deepspeed", "layout.cp=2"});
  ASSERT_TRUE(framework.thrown);
  EXPECT_EQ(framework.field, "layout.cp");
  EXPECT_NE(framework.detail.find("training.framework 'megatron-deepspeed' sets it"),
            std::string::npos)
      << framework.detail;
}

TEST(app_scenario_loader, EmbeddingAndLossCountedAsLayersSplitOrNameTheirField) {
  // llama3-8b: 32 layers. Counting the embedding and the loss makes 34, which pp 2 splits
  // (17 + 17: 16 transformer layers on each stage) and pp 4 does not.
  const std::string counted =
      "  account_for_embedding_in_split: true\n  account_for_loss_in_split: true\n";
  EXPECT_FALSE(load_error(small_scenario("  pp: 2\n" + counted)).thrown);
  const Caught uneven = load_error(small_scenario("  pp: 4\n" + counted));
  ASSERT_TRUE(uneven.thrown);
  EXPECT_EQ(uneven.field, "layout.pp");
  EXPECT_NE(uneven.detail.find("loss or MTP modules counted, 34"), std::string::npos)
      << uneven.detail;
  const Caught pinned = load_error(small_scenario("  pp: 2\n  first_stage_layers: 8\n" + counted));
  ASSERT_TRUE(pinned.thrown);
  EXPECT_EQ(pinned.field, "layout.account_for_embedding_in_split");
  // llama3-8b has no multi-token-prediction module to count.
  const Caught no_mtp = load_error(small_scenario("  pp: 2\n  account_for_mtp_in_split: true\n"));
  ASSERT_TRUE(no_mtp.thrown);
  EXPECT_EQ(no_mtp.field, "layout.account_for_mtp_in_split");
}

TEST(app_scenario_loader, ACountedEmbeddingOrLossMayNotEmptyAChunk) {
  // llama3-8b with the embedding and the loss counted: 34 layers, which pp 2 x 17 virtual stages
  // split one to a chunk, leaving the first chunk (the embedding's) without a transformer
  // layer. It used to pass validation and stop in the pipeline map as an internal error.
  const Caught embedding =
      load_error(small_scenario("  pp: 2\n  virtual_stages: 17\n"
                                "  account_for_embedding_in_split: true\n"
                                "  account_for_loss_in_split: true\n"),
                 "s", {"training.schedule=INTERLEAVED_1F1B", "training.global_batch_size=64"});
  ASSERT_TRUE(embedding.thrown);
  EXPECT_EQ(embedding.field, "layout.account_for_embedding_in_split");
  EXPECT_NE(embedding.detail.find("leaves the first chunk without a transformer layer"),
            std::string::npos)
      << embedding.detail;
  // The loss alone with 31 layers: 32 counted. Two plain stages of 16 are fine; 2 x 16 virtual
  // stages put one in a chunk, and the last chunk holds the loss alone.
  EXPECT_FALSE(load_error(small_scenario("  pp: 2\n  account_for_loss_in_split: true\n"), "s",
                          {"model.num_layers=31"})
                   .thrown);
  const Caught loss = load_error(
      small_scenario("  pp: 2\n  virtual_stages: 16\n  account_for_loss_in_split: true\n"), "s",
      {"model.num_layers=31", "training.schedule=INTERLEAVED_1F1B"});
  ASSERT_TRUE(loss.thrown);
  EXPECT_EQ(loss.field, "layout.account_for_loss_in_split");
  EXPECT_NE(loss.detail.find("last chunk"), std::string::npos) << loss.detail;
}

TEST(app_scenario_loader, PipelineLayoutMustFillThePipelineItNames) {
  // llama3-8b: 32 layers. pp 2 plain: two chunks.
  const std::string ok = "  pp: 2\n  pipeline_layout: \"Et*15|t*17L\"\n";
  EXPECT_FALSE(load_error(small_scenario(ok)).thrown);
  // The layout names the line and the field; an override of pp that no longer fits names pp.
  const Caught count = load_error(small_scenario("  pp: 2\n  pipeline_layout: \"Et*32L\"\n"));
  ASSERT_TRUE(count.thrown);
  EXPECT_EQ(count.field, "layout.pipeline_layout");
  EXPECT_EQ(count.where.line, 9);
  EXPECT_NE(count.detail.find("holds 1 chunks; the pipeline has pp 2 x 1 virtual stages = 2"),
            std::string::npos)
      << count.detail;
  const Caught pp = load_error(small_scenario(ok), "s", {"layout.pp=4"});
  ASSERT_TRUE(pp.thrown);
  EXPECT_EQ(pp.field, "layout.pp");
  const Caught layers = load_error(small_scenario("  pp: 2\n  pipeline_layout: \"Et*15|t*16L\"\n"));
  ASSERT_TRUE(layers.thrown);
  EXPECT_NE(layers.detail.find("holds 31 transformer layers ('t'); model.num_layers is 32"),
            std::string::npos)
      << layers.detail;
  // A chunk may hold the embedding alone (Megatron-Core's standalone embedding stage).
  EXPECT_FALSE(load_error(small_scenario("  pp: 2\n  pipeline_layout: \"E|t*32L\"\n")).thrown);
  // MTP modules follow the last layer, beside the loss or in a chunk of their own before it
  // (Megatron-Core's "...m|L"); llama3-8b has none to place.
  const Caught mtp = load_error(small_scenario("  pp: 2\n  pipeline_layout: \"Et*16|t*16mL\"\n"));
  ASSERT_TRUE(mtp.thrown);
  EXPECT_NE(mtp.detail.find("holds 1 MTP modules ('m'); model.mtp_depth is 0"), std::string::npos)
      << mtp.detail;
  EXPECT_FALSE(load_error(small_scenario("  pp: 2\n  pipeline_layout: \"Et*16|t*16mL\"\n"), "s",
                          {"model.mtp_depth=1"})
                   .thrown);
  EXPECT_FALSE(load_error(small_scenario("  pp: 2\n  virtual_stages: 2\n"
                                         "  pipeline_layout: \"Et*16|t*16|m|L\"\n"),
                          "s", {"model.mtp_depth=1", "training.schedule=INTERLEAVED_1F1B"})
                   .thrown);
  const Caught early_mtp = load_error(
      small_scenario("  pp: 2\n  pipeline_layout: \"Et*16m|t*16L\"\n"), "s", {"model.mtp_depth=1"});
  ASSERT_TRUE(early_mtp.thrown);
  EXPECT_NE(early_mtp.detail.find("chunk 1 holds transformer layers ('t') after the MTP modules "
                                  "of chunk 0"),
            std::string::npos)
      << early_mtp.detail;
  const Caught inside =
      load_error(small_scenario("  pp: 2\n  pipeline_layout: \"Et*16|t*8mt*8L\"\n"), "s",
                 {"model.mtp_depth=1"});
  ASSERT_TRUE(inside.thrown);
  EXPECT_NE(inside.detail.find("chunk 1 has a transformer layer ('t') after an MTP module"),
            std::string::npos)
      << inside.detail;
  // With a layout as without, interleaving runs micro-batches in groups of pp: 3 per DP rank
  // over pp 2 is refused before any work (it stopped the schedule with an internal error).
  const Caught groups = load_error(
      small_scenario("  pp: 2\n  virtual_stages: 2\n  pipeline_layout: \"Et*8|t*8|t*8|t*8L\"\n"),
      "s", {"training.schedule=INTERLEAVED_1F1B", "training.global_batch_size=12"});
  ASSERT_TRUE(groups.thrown);
  EXPECT_EQ(groups.field, "training.global_batch_size");
  EXPECT_NE(groups.detail.find("3 micro-batches per data-parallel rank is not a multiple of pp 2"),
            std::string::npos)
      << groups.detail;
  const Caught spread = load_error(
      small_scenario("  pp: 2\n  virtual_stages: 2\n  pipeline_layout: \"Et*16|t*16|m|mL\"\n"), "s",
      {"model.mtp_depth=2", "training.schedule=INTERLEAVED_1F1B"});
  ASSERT_TRUE(spread.thrown);
  EXPECT_NE(spread.detail.find("spreads the MTP modules ('m') over 2 chunks"), std::string::npos)
      << spread.detail;
  const Caught loss = load_error(small_scenario("  pp: 2\n  pipeline_layout: \"Et*16|Lt*16\"\n"));
  ASSERT_TRUE(loss.thrown);
  EXPECT_NE(loss.detail.find("close the last chunk"), std::string::npos) << loss.detail;
  const Caught bad = load_error(small_scenario("  pp: 2\n  pipeline_layout: \"Et*16|t*16Q\"\n"));
  ASSERT_TRUE(bad.thrown);
  EXPECT_EQ(bad.field, "layout.pipeline_layout");
  EXPECT_NE(bad.detail.find("unknown layer 'Q'"), std::string::npos) << bad.detail;
  // It replaces the other ways of splitting the layers.
  const Caught pinned =
      load_error(small_scenario("  pp: 2\n  first_stage_layers: 15\n"
                                "  pipeline_layout: \"Et*15|t*17L\"\n"));
  ASSERT_TRUE(pinned.thrown);
  EXPECT_EQ(pinned.field, "layout.first_stage_layers");
  const Caught dual = load_error(small_scenario(ok), "s", {"training.schedule=DUALPIPE"});
  ASSERT_TRUE(dual.thrown);
  EXPECT_EQ(dual.field, "training.schedule");
}

TEST(app_scenario_loader, FirstStagePinOnlyForAPlainPipeline) {
  // DualPipe and virtual stages cut the layers into equal chunks: a pin used to reach the
  // pipeline map and fail there as an internal error.
  const std::pair<std::string, std::string> cases[] = {
      {"  pp: 4\n  first_stage_layers: 8\n", "DUALPIPE"},
      {"  pp: 4\n  virtual_stages: 2\n  first_stage_layers: 8\n", "INTERLEAVED_1F1B"}};
  for (const auto& [layout, schedule] : cases) {
    const Caught error =
        load_error(small_scenario(layout), "s",
                   {"training.schedule=" + schedule, "training.global_batch_size=64"});
    ASSERT_TRUE(error.thrown) << schedule;
    EXPECT_EQ(error.field, "layout.first_stage_layers");
    EXPECT_NE(error.detail.find("plain pipeline"), std::string::npos) << error.detail;
  }
}

TEST(app_scenario_loader, ErrorOnAFieldInheritedFromAModelPresetNamesThePreset) {
  // gpt3-175b has 96 heads and 96 KV heads; overriding num_heads alone leaves the preset's KV
  // heads, which the user never wrote.
  const Caught error = load_error(small_scenario("  tp: 8\n"), "scenario.textproto",
                                  {"model.preset=gpt3-175b", "model.num_heads=48"});
  ASSERT_TRUE(error.thrown);
  EXPECT_EQ(error.field, "model.num_kv_heads");
  EXPECT_NE(error.where.file.find("model preset 'gpt3-175b'"), std::string::npos)
      << error.where.file;
}

TEST(app_scenario_loader, TitleSaysWhatTheCommandLineChanged) {
  const config::LoadedScenario loaded = config::load_scenario_text(
      "name: \"run\"\n" + small_scenario("  tp: 2\n"), "s", {"layout.tp=4"});
  EXPECT_EQ(loaded.scenario.name(), "run (--set layout.tp=4)");
}

// gpt-oss's windowed and full layers keep their own KV heads, which tensor parallelism splits:
// a TP larger than its 8 KV heads is refused before any work, as for any GQA model; a window of
// no tokens is refused too.
TEST(app_scenario_loader, WindowedLayersNeedWholeKvHeadsAndAWindow) {
  const std::string gpt_oss =
      "model { preset: \"gpt-oss-120b\" }\n"
      "hardware { preset: \"gb200-nvl72\" nodes: 4 }\n"
      "training { global_batch_size: 16 seq_length: 4096 }\n"
      "layout { tp: 16 ep: 1 }\n";
  const Caught tp = load_error(gpt_oss);
  ASSERT_TRUE(tp.thrown);
  EXPECT_EQ(tp.field, "layout.tp");
  EXPECT_NE(tp.detail.find("num_kv_heads 8"), std::string::npos) << tp.detail;
  const Caught window =
      load_error(gpt_oss, "s.textproto", {"layout.tp=1", "model.hybrid.window_tokens=0"});
  ASSERT_TRUE(window.thrown);
  EXPECT_EQ(window.field, "model.hybrid.window_tokens");
}

}  // namespace
}  // namespace racksim::config
