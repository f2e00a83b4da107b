// Model presets as protobuf text format, with the published dimensions from
// docs/sources.md §8. head_dim and num_kv_heads follow from the other fields
// unless the model departs from the usual hidden_size / num_heads.
#include "workloads/model/model_presets.h"

#include <google/protobuf/text_format.h>

#include <array>
#include <stdexcept>

#include <fmt/format.h>

namespace racksim {
namespace {

constexpr std::string_view kGpt3_175b = R"pb(
  source: "docs/sources.md §8: GPT-3 175B (Brown et al. 2020); vocabulary 50257 padded to 51200 as Megatron does; sequence 2048"
  hidden_size: 12288
  num_layers: 96
  num_heads: 96
  num_kv_heads: 96
  ffn_hidden_size: 49152
  activation: GELU
  vocab_size: 51200
  position_encoding: LEARNED_ABSOLUTE
  tie_embeddings: true
)pb";

constexpr std::string_view kLlama3_8b = R"pb(
  source: "docs/sources.md §8: Llama-3 8B (Llama 3 model card / config.json)"
  hidden_size: 4096
  num_layers: 32
  num_heads: 32
  num_kv_heads: 8
  ffn_hidden_size: 14336
  activation: SWIGLU
  vocab_size: 128256
  position_encoding: ROTARY
  tie_embeddings: false
)pb";

constexpr std::string_view kLlama3_70b = R"pb(
  source: "docs/sources.md §8: Llama-3 70B (Llama 3 model card / config.json)"
  hidden_size: 8192
  num_layers: 80
  num_heads: 64
  num_kv_heads: 8
  ffn_hidden_size: 28672
  activation: SWIGLU
  vocab_size: 128256
  position_encoding: ROTARY
  tie_embeddings: false
)pb";

constexpr std::string_view kLlama3_405b = R"pb(
  source: "docs/sources.md §8: Llama-3 405B (The Llama 3 Herd of Models, 2024)"
  hidden_size: 16384
  num_layers: 126
  num_heads: 128
  num_kv_heads: 8
  ffn_hidden_size: 53248
  activation: SWIGLU
  vocab_size: 128256
  position_encoding: ROTARY
  tie_embeddings: false
)pb";

constexpr std::string_view kMixtral8x7b = R"pb(
  source: "docs/sources.md §8: Mixtral 8x7B (Mistral AI, config.json): 8 SwiGLU experts of 14336, top-2, every layer MoE; 46.7B total, 12.9B active"
  hidden_size: 4096
  num_layers: 32
  num_heads: 32
  num_kv_heads: 8
  ffn_hidden_size: 14336
  activation: SWIGLU
  vocab_size: 32000
  position_encoding: ROTARY
  tie_embeddings: false
  num_experts: 8
  experts_per_token: 2
  moe_ffn_hidden_size: 14336
)pb";

constexpr std::string_view kDeepseekV3 = R"pb(
  source: "docs/sources.md §8: DeepSeek-V3 (arXiv 2412.19437, config.json): MLA (q_lora 1536, kv_lora 512, qk_nope 128, qk_rope 64, v 128), 1 shared + 256 routed experts of 2048, 8 per token from at most 4 of 8 groups (n_group, topk_group: node-limited routing), first 3 layers dense (18432), MTP depth 1; 671B total / 37B active without MTP"
  hidden_size: 7168
  num_layers: 61
  num_heads: 128
  head_dim: 128
  v_head_dim: 128
  q_lora_rank: 1536
  kv_lora_rank: 512
  qk_rope_head_dim: 64
  ffn_hidden_size: 18432
  activation: SWIGLU
  vocab_size: 129280
  position_encoding: ROTARY
  tie_embeddings: false
  num_experts: 256
  experts_per_token: 8
  moe_expert_groups: 8
  moe_groups_per_token: 4
  moe_ffn_hidden_size: 2048
  num_shared_experts: 1
  first_dense_layers: 3
  mtp_depth: 1
)pb";

// gpt-oss-120b: sliding-window (128-token) and full attention alternate, the first layer sliding;
// its per-head attention sinks and the projections' biases are not timed (a few elements each).
constexpr std::string_view kGptOss120b = R"pb(
  source: "docs/sources.md §8: gpt-oss-120b (OpenAI, config.json on Hugging Face, Apache-2.0; model card arXiv 2508.10925): 36 layers alternating 128-token sliding-window and full attention, 64 query heads of 64 over 8 KV heads, 128 SwiGLU experts of 2880, top-4, every layer MoE, vocabulary 201088 (untied); 116.8B total, 5.1B active"
  hidden_size: 2880
  num_layers: 36
  num_heads: 64
  num_kv_heads: 8
  head_dim: 64
  activation: SWIGLU
  vocab_size: 201088
  position_encoding: ROTARY
  tie_embeddings: false
  num_experts: 128
  experts_per_token: 4
  moe_ffn_hidden_size: 2880
  hybrid { layer_pattern: "WFWFWFWFWFWFWFWFWFWFWFWFWFWFWFWFWFWF" window_tokens: 128 }
)pb";

// Qwen3's MoE models: every layer MoE, no shared expert, attention 128 wide per head (wider
// than hidden_size / num_heads); the per-head RMSNorm of queries and keys is not timed.
constexpr std::string_view kQwen3_30bA3b = R"pb(
  source: "docs/sources.md §8: Qwen3-30B-A3B (Qwen3 Technical Report, arXiv 2505.09388, Table 2; config.json on Hugging Face, Apache-2.0): 48 layers, hidden 2048, 32 query heads of 128 over 4 KV heads, 128 SwiGLU experts of 768, 8 per token, every layer MoE, vocabulary 151936 (untied); 30.5B total, 3.3B active"
  hidden_size: 2048
  num_layers: 48
  num_heads: 32
  num_kv_heads: 4
  head_dim: 128
  activation: SWIGLU
  vocab_size: 151936
  position_encoding: ROTARY
  tie_embeddings: false
  num_experts: 128
  experts_per_token: 8
  moe_ffn_hidden_size: 768
)pb";

constexpr std::string_view kQwen3_235bA22b = R"pb(
  source: "docs/sources.md §8: Qwen3-235B-A22B (Qwen3 Technical Report, arXiv 2505.09388, Table 2; config.json on Hugging Face, Apache-2.0): 94 layers, hidden 4096, 64 query heads of 128 over 4 KV heads, 128 SwiGLU experts of 1536, 8 per token, every layer MoE, vocabulary 151936 (untied); 235B total, 22B active"
  hidden_size: 4096
  num_layers: 94
  num_heads: 64
  num_kv_heads: 4
  head_dim: 128
  activation: SWIGLU
  vocab_size: 151936
  position_encoding: ROTARY
  tie_embeddings: false
  num_experts: 128
  experts_per_token: 8
  moe_ffn_hidden_size: 1536
)pb";

// The seed case's model (docs/seed-case.md): the structure is the
// report's; dimensions it does not give are chosen so that the totals land on its figures.
constexpr std::string_view kSeed290bMoe = R"pb(
  source: "docs/seed-case.md: 43 layers (2 sliding-window, 20 HCA ratio 128, 21 CSA ratio 4 with a 64 x 128 indexer, top-512, window 128), hidden 4096, 256 routed SwiGLU experts, 6 per token. Chosen here: 64 query heads of 512 over one shared 512-wide KV latent (MQA), query latent 640, experts of 2080, vocabulary 129280 (untied), no shared expert: 289.5B total, 14.17B active"
  hidden_size: 4096
  num_layers: 43
  num_heads: 64
  num_kv_heads: 1
  head_dim: 512
  v_head_dim: 512
  q_lora_rank: 640
  activation: SWIGLU
  vocab_size: 129280
  tie_embeddings: false
  num_experts: 256
  experts_per_token: 6
  moe_ffn_hidden_size: 2080
  hybrid {
    sliding_window_layers: 2
    compressed_layers: 20
    compressed_sparse_layers: 21
    window_tokens: 128
    compressed_ratio: 128
    sparse_ratio: 4
    indexer_heads: 64
    indexer_head_dim: 128
    sparse_top_k: 512
  }
)pb";

struct Preset {
  std::string_view name;
  std::string_view text;
};

constexpr std::array<Preset, 10> kPresets = {{
    {"gpt3-175b", kGpt3_175b},
    {"llama3-8b", kLlama3_8b},
    {"llama3-70b", kLlama3_70b},
    {"llama3-405b", kLlama3_405b},
    {"mixtral-8x7b", kMixtral8x7b},
    {"deepseek-v3", kDeepseekV3},
    {"gpt-oss-120b", kGptOss120b},
    {"qwen3-30b-a3b", kQwen3_30bA3b},
    {"qwen3-235b-a22b", kQwen3_235bA22b},
    {"seed-290b-moe", kSeed290bMoe},
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
