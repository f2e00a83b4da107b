// Model presets as protobuf text format, with the published dimensions from
// ../shared/reference/model-facts.md. head_dim and num_kv_heads follow from the other fields
// unless the model departs from the usual hidden_size / num_heads.
#include "workloads/model_presets.h"

#include <google/protobuf/text_format.h>

#include <array>
#include <stdexcept>

#include <fmt/format.h>

namespace racksim {
namespace {

constexpr std::string_view kGpt3_175b = R"pb(
  source: "model-facts.md: GPT-3 175B (Brown et al. 2020); vocabulary 50257 padded to 51200 as Megatron does; sequence 2048"
  hidden_size: 12288
  num_layers: 96
  num_heads: 96
  num_kv_heads: 96
  ffn_hidden_size: 49152
  activation: GELU
  vocab_size: 51200
  tie_embeddings: true
)pb";

constexpr std::string_view kLlama3_8b = R"pb(
  source: "model-facts.md: Llama-3 8B (Llama 3 model card / config.json)"
  hidden_size: 4096
  num_layers: 32
  num_heads: 32
  num_kv_heads: 8
  ffn_hidden_size: 14336
  activation: SWIGLU
  vocab_size: 128256
  tie_embeddings: false
)pb";

constexpr std::string_view kLlama3_70b = R"pb(
  source: "model-facts.md: Llama-3 70B (Llama 3 model card / config.json)"
  hidden_size: 8192
  num_layers: 80
  num_heads: 64
  num_kv_heads: 8
  ffn_hidden_size: 28672
  activation: SWIGLU
  vocab_size: 128256
  tie_embeddings: false
)pb";

constexpr std::string_view kLlama3_405b = R"pb(
  source: "model-facts.md: Llama-3 405B (The Llama 3 Herd of Models, 2024)"
  hidden_size: 16384
  num_layers: 126
  num_heads: 128
  num_kv_heads: 8
  ffn_hidden_size: 53248
  activation: SWIGLU
  vocab_size: 128256
  tie_embeddings: false
)pb";

struct Preset {
  std::string_view name;
  std::string_view text;
};

constexpr std::array<Preset, 4> kPresets = {{
    {"gpt3-175b", kGpt3_175b},
    {"llama3-8b", kLlama3_8b},
    {"llama3-70b", kLlama3_70b},
    {"llama3-405b", kLlama3_405b},
}};

}  // namespace

std::optional<config::Model> model_preset(std::string_view name) {
  for (const Preset& preset : kPresets) {
    if (preset.name != name) continue;
    config::Model model;
    // The texts are part of the program, so a parse failure is a bug, not bad input.
    if (!google::protobuf::TextFormat::ParseFromString(std::string(preset.text), &model)) {
      throw std::logic_error(fmt::format("built-in model preset '{}' does not parse", name));
    }
    model.set_preset(std::string(preset.name));
    return model;
  }
  return std::nullopt;
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const Preset& preset : kPresets) names.emplace_back(preset.name);
  return names;
}

}  // namespace racksim
