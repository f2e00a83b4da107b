// model { hf_config: "config.json" }: published Hugging Face configs give the presets' models
// (the same parameters, active parameters and MTP modules), fields written inline win, and
// configs racksim would simulate wrong are refused with the key and its line.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "config/scenario_loader.h"
#include "tests/support/run_racksim.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer.h"

namespace racksim::config {
namespace {

using racksim::testing::TempDir;

const std::string kHfData = std::string(RACKSIM_SOURCE_DIR) + "/tests/data/hf/";

std::string hf_text(const std::string& name) {
  return racksim::testing::read_file(kHfData + name);
}

// A scenario beside `config_name` (in `dir`) that reads it; `model_extra` goes into model { }.
std::string write_scenario(const TempDir& dir, const std::string& config_name,
                           const std::string& model_extra = "", const std::string& layout = "") {
  return dir.write("scenario.textproto",
                   "name: \"hf\"\n"
                   "model {\n"
                   "  hf_config: \"" +
                       config_name + "\"\n" + model_extra +
                       "}\n"
                       "hardware { preset: \"dgx-h100\" nodes: 1 }\n"
                       "layout { tp: 8 sequence_parallel: true " +
                       layout +
                       "}\n"
                       "training { global_batch_size: 8 seq_length: 4096 }\n");
}

config::Model load_model(const TempDir& dir, const std::string& file) {
  dir.write(file, hf_text(file));
  return config::load_scenario(write_scenario(dir, file), {}).scenario.model();
}

// The resolved preset, as the loader resolves a scenario's model.
config::Model resolved_preset(const std::string& name) {
  config::Scenario s;
  s.mutable_model()->set_preset(name);
  config::resolve_presets(&s, config::SourceMap{});
  return s.model();
}

// The two models agree on every dimension (not on where they came from).
void expect_same_dimensions(const config::Model& imported, const config::Model& preset) {
  google::protobuf::util::MessageDifferencer diff;
  const auto* type = config::Model::descriptor();
  for (const char* field : {"preset", "source", "hf_config"}) {
    diff.IgnoreField(type->FindFieldByName(field));
  }
  std::string report;
  diff.ReportDifferencesToString(&report);
  EXPECT_TRUE(diff.Compare(imported, preset)) << report;
}

void expect_same_sizes(const config::Model& imported, const std::string& preset_name) {
  const TransformerModel a(imported);
  const TransformerModel b(*model_preset(preset_name));
  EXPECT_DOUBLE_EQ(a.total_params(), b.total_params()) << preset_name;
  EXPECT_DOUBLE_EQ(a.active_params(), b.active_params()) << preset_name;
  EXPECT_DOUBLE_EQ(a.mtp_params(), b.mtp_params()) << preset_name;
}

TEST(app_hf_config, Llama3_8bIsThePreset) {
  TempDir dir;
  const config::Model model = load_model(dir, "llama3-8b.config.json");
  expect_same_dimensions(model, resolved_preset("llama3-8b"));
  expect_same_sizes(model, "llama3-8b");
  EXPECT_NEAR(TransformerModel(model).total_params() / 1e9, 8.03, 0.01);
  EXPECT_NE(model.source().find("LlamaForCausalLM"), std::string::npos);
}

TEST(app_hf_config, DeepseekV3IsThePreset) {
  TempDir dir;
  const config::Model model = load_model(dir, "deepseek-v3.config.json");
  expect_same_dimensions(model, resolved_preset("deepseek-v3"));
  expect_same_sizes(model, "deepseek-v3");
  const TransformerModel ledger(model);
  EXPECT_NEAR(ledger.total_params() / 1e9, 671, 0.01 * 671);
  EXPECT_NEAR(ledger.active_params() / 1e9, 37, 0.02 * 37);
  EXPECT_EQ(model.mtp_depth(), 1);
  EXPECT_EQ(model.first_dense_layers(), 3);
}

TEST(app_hf_config, MixtralIsThePreset) {
  TempDir dir;
  const config::Model model = load_model(dir, "mixtral-8x7b.config.json");
  expect_same_dimensions(model, resolved_preset("mixtral-8x7b"));
  expect_same_sizes(model, "mixtral-8x7b");
}

TEST(app_hf_config, Qwen2MoeSharedExpertIsAWholeNumberOfExperts) {
  TempDir dir;
  const config::Model model = load_model(dir, "qwen1.5-moe-a2.7b.config.json");
  EXPECT_EQ(model.num_experts(), 60);
  EXPECT_EQ(model.moe_ffn_hidden_size(), 1408);
  EXPECT_EQ(model.num_shared_experts(), 4);  // 5632 = 4 x 1408
  // Qwen1.5-MoE-A2.7B: 14.3B parameters, 2.7B active without the embeddings; racksim leaves
  // out the q/k/v biases and the shared expert's gate (a few million).
  const TransformerModel ledger(model);
  EXPECT_NEAR(ledger.total_params() / 1e9, 14.3, 0.05 * 14.3);
  EXPECT_NEAR((ledger.active_params() - ledger.embedding_params()) / 1e9, 2.0, 0.1);
}

TEST(app_hf_config, InlineFieldsOverrideTheConfig) {
  TempDir dir;
  dir.write("config.json", hf_text("llama3-8b.config.json"));
  const auto loaded = config::load_scenario(
      write_scenario(dir, "config.json", "  num_layers: 16\n"), {"model.vocab_size=32000"});
  EXPECT_EQ(loaded.scenario.model().num_layers(), 16);
  EXPECT_EQ(loaded.scenario.model().vocab_size(), 32000);
  EXPECT_EQ(loaded.scenario.model().hidden_size(), 4096);
}

// The InputError a config gives, as "file:line: field: detail".
std::string error_of(const std::string& config_text, const std::string& model_extra = "") {
  TempDir dir;
  dir.write("config.json", config_text);
  try {
    config::load_scenario(write_scenario(dir, "config.json", model_extra), {});
  } catch (const InputError& e) {
    std::string text = format_input_error(e.where(), e.field(), e.detail());
    return std::regex_replace(text, std::regex(dir.path().string() + "/"), "");
  }
  ADD_FAILURE() << "no error";
  return {};
}

std::string llama_with(const std::string& extra_key) {
  std::string text = hf_text("llama3-8b.config.json");
  return text.insert(text.find("  \"attention_bias\""), extra_key);
}

TEST(app_hf_config, UnknownArchitectureNamesFileFieldAndArchitecture) {
  std::string text = hf_text("llama3-8b.config.json");
  text.replace(text.find("LlamaForCausalLM"), 16, "GPT2LMHeadModel");
  const std::string error = error_of(text);
  EXPECT_NE(error.find("config.json:2:"), std::string::npos) << error;
  EXPECT_NE(error.find("model.hf_config"), std::string::npos) << error;
  EXPECT_NE(error.find("'GPT2LMHeadModel'"), std::string::npos) << error;
}

TEST(app_hf_config, SlidingWindowOnLlamaNamesTheKeyAndLine) {
  const std::string error = error_of(llama_with("  \"sliding_window\": 4096,\n"));
  EXPECT_NE(error.find("config.json:5:3:"), std::string::npos) << error;
  EXPECT_NE(error.find("'sliding_window'"), std::string::npos) << error;
}

TEST(app_hf_config, UnknownKeyNamesTheKey) {
  const std::string error = error_of(llama_with("  \"use_fancy_layers\": true,\n"));
  EXPECT_NE(error.find("config.json:5:3:"), std::string::npos) << error;
  EXPECT_NE(error.find("'use_fancy_layers'"), std::string::npos) << error;
}

TEST(app_hf_config, KeysWithAnEffectRacksimDoesNotModelAreRefused) {
  std::string biased = hf_text("llama3-8b.config.json");
  biased.replace(biased.find("\"attention_bias\": false"), 23, "\"attention_bias\": true");
  EXPECT_NE(error_of(biased).find("'attention_bias' is true"), std::string::npos);

  std::string mistral = hf_text("mixtral-8x7b.config.json");
  mistral.replace(mistral.find("\"sliding_window\": null"), 22, "\"sliding_window\": 4096");
  EXPECT_NE(error_of(mistral).find("'sliding_window' is 4096"), std::string::npos);

  std::string qwen = hf_text("qwen1.5-moe-a2.7b.config.json");
  qwen.replace(qwen.find("\"use_sliding_window\": false"), 27, "\"use_sliding_window\": true");
  EXPECT_NE(error_of(qwen).find("'use_sliding_window' is true"), std::string::npos);

  std::string deepseek = hf_text("deepseek-v3.config.json");
  deepseek.replace(deepseek.find("\"moe_layer_freq\": 1"), 19, "\"moe_layer_freq\": 2");
  EXPECT_NE(error_of(deepseek).find("'moe_layer_freq' is 2"), std::string::npos);
}

TEST(app_hf_config, AKeyOfAnotherArchitectureIsUnknown) {
  const std::string error = error_of(llama_with("  \"kv_lora_rank\": 512,\n"));
  EXPECT_NE(error.find("'kv_lora_rank' is not one racksim knows for LlamaForCausalLM"),
            std::string::npos)
      << error;
}

TEST(app_hf_config, WrongTypeAndBadJsonAndMissingFile) {
  std::string text = hf_text("llama3-8b.config.json");
  text.replace(text.find("\"hidden_size\": 4096"), 19, "\"hidden_size\": \"4096\"");
  EXPECT_NE(error_of(text).find("'hidden_size' is \"4096\", expected a non-negative integer"),
            std::string::npos);

  const std::string bad_json =
      error_of("{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  oops\n}\n");
  EXPECT_NE(bad_json.find("config.json:3:"), std::string::npos) << bad_json;
  EXPECT_NE(bad_json.find("not valid JSON"), std::string::npos) << bad_json;

  TempDir dir;
  const std::string scenario = write_scenario(dir, "missing.json");
  try {
    config::load_scenario(scenario, {});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, scenario);
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.field(), "model.hf_config");
  }
}

TEST(app_hf_config, PresetAndHfConfigTogetherAreAnError) {
  const std::string error = error_of(hf_text("llama3-8b.config.json"), "  preset: \"llama3-8b\"\n");
  EXPECT_NE(error.find("not both"), std::string::npos) << error;
}

TEST(app_hf_config, CliExitsWithTwoAndNamesTheKey) {
  TempDir dir;
  dir.write("config.json", llama_with("  \"sliding_window\": 4096,\n"));
  const auto result = racksim::testing::run_racksim({"run", write_scenario(dir, "config.json")});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("config.json:5:3"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("sliding_window"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace racksim::config
