#include "config/hf_config.h"

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string_view>

#include <fmt/format.h>

namespace racksim {
namespace {

using nlohmann::json;

// What the keys have said so far; the fields that depend on several keys are set at the end.
struct Reading {
  config::Model model;
  std::optional<int64_t> shared_expert_ffn;  // Qwen2-MoE: the shared expert's width
};

using ReadKey = void (*)(const std::string& key, const json& value, Reading& r);

struct KeyRule {
  std::string_view key;
  ReadKey read;
};

std::string shown(const json& value) {
  std::string text = value.dump();
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

int64_t non_negative_int(const std::string& key, const json& value) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0) {
    throw HfConfigError(
        key, fmt::format("'{}' is {}, expected a non-negative integer", key, shown(value)));
  }
  return value.get<int64_t>();
}

// ---------------------------------------------------------------------------------------------
// Readers

void ignore(const std::string&, const json&, Reading&) {}

template <auto Set>
void set_int(const std::string& key, const json& value, Reading& r) {
  (r.model.*Set)(non_negative_int(key, value));
}

// An integer where null means "none" (DeepSeek's q_lora_rank: a full query projection).
template <auto Set>
void set_int_or_null(const std::string& key, const json& value, Reading& r) {
  (r.model.*Set)(value.is_null() ? 0 : non_negative_int(key, value));
}

void read_tie(const std::string& key, const json& value, Reading& r) {
  if (!value.is_boolean()) {
    throw HfConfigError(key, fmt::format("'{}' is {}, expected true or false", key, shown(value)));
  }
  r.model.set_tie_embeddings(value.get<bool>());
}

// The gated MLP of these architectures with a SiLU gate: racksim's SWIGLU.
void read_hidden_act(const std::string& key, const json& value, Reading& r) {
  if (value != "silu" && value != "swish") {
    throw HfConfigError(key, fmt::format("'{}' is {}: racksim models the gated SiLU MLP "
                                         "(\"silu\") of these architectures only",
                                         key, shown(value)));
  }
  r.model.set_activation(config::Model::SWIGLU);
}

// Mixtral's experts are as wide as its intermediate_size.
void read_mixtral_ffn(const std::string& key, const json& value, Reading& r) {
  const int64_t ffn = non_negative_int(key, value);
  r.model.set_ffn_hidden_size(ffn);
  r.model.set_moe_ffn_hidden_size(ffn);
}

void read_shared_expert_ffn(const std::string& key, const json& value, Reading& r) {
  r.shared_expert_ffn = non_negative_int(key, value);
}

// Keys that racksim accepts only with the value that leaves the model as it models it.
[[noreturn]] void not_modelled(const std::string& key, const json& value, std::string_view why) {
  throw HfConfigError(key, fmt::format("'{}' is {}: {}", key, shown(value), why));
}

void require_false(const std::string& key, const json& value, Reading&) {
  if (value != false) not_modelled(key, value, "racksim does not model biases (expected false)");
}

void require_no_window(const std::string& key, const json& value, Reading&) {
  if (!value.is_null() && value != false) {
    not_modelled(key, value,
                 "racksim does not model sliding-window attention in GQA layers (expected null "
                 "or false)");
  }
}

void require_one(const std::string& key, const json& value, Reading&) {
  if (value != 1)
    not_modelled(key, value,
                 "racksim models an MoE block in every layer after "
                 "the dense ones (expected 1)");
}

void require_empty(const std::string& key, const json& value, Reading&) {
  if (!value.is_array() || !value.empty()) {
    not_modelled(key, value,
                 "racksim models dense layers only as the first layers "
                 "(expected [])");
  }
}

void require_full_attention(const std::string& key, const json& value, Reading&) {
  const bool all_full = value.is_array() && std::all_of(value.begin(), value.end(), [](auto& v) {
                          return v == "full_attention";
                        });
  if (!all_full) {
    not_modelled(key, value,
                 "racksim models only \"full_attention\" layers for this "
                 "architecture");
  }
}

// ---------------------------------------------------------------------------------------------
// Key tables

using M = config::Model;

// Every architecture: the sizes, and keys known not to change what racksim simulates
// (positions, numerics, token ids, storage and caching, router losses and normalisation).
constexpr auto kCommonKeys = std::to_array<KeyRule>({
    {"architectures", ignore},
    {"model_type", ignore},
    {"hidden_size", set_int<&M::set_hidden_size>},
    {"num_hidden_layers", set_int<&M::set_num_layers>},
    {"num_attention_heads", set_int<&M::set_num_heads>},
    {"num_key_value_heads", set_int<&M::set_num_kv_heads>},
    {"vocab_size", set_int<&M::set_vocab_size>},
    {"tie_word_embeddings", read_tie},
    {"hidden_act", read_hidden_act},
    {"_name_or_path", ignore},
    {"auto_map", ignore},
    {"bos_token_id", ignore},
    {"eos_token_id", ignore},
    {"pad_token_id", ignore},
    {"torch_dtype", ignore},  // the checkpoint's dtype; the simulated one is training.dtype
    {"dtype", ignore},
    {"transformers_version", ignore},
    {"use_cache", ignore},
    {"initializer_range", ignore},
    {"rms_norm_eps", ignore},
    {"rope_theta", ignore},
    {"rope_scaling", ignore},
    {"max_position_embeddings", ignore},
    {"attention_dropout", ignore},
    {"pretraining_tp", ignore},  // a numerics trick for the LM head, same FLOPs
    {"output_router_logits", ignore},
    {"router_aux_loss_coef", ignore},
    {"router_jitter_noise", ignore},
    {"norm_topk_prob", ignore},
    {"quantization_config", ignore},  // how the checkpoint is stored, not how it trains
});

constexpr auto kLlamaKeys = std::to_array<KeyRule>({
    {"head_dim", set_int<&M::set_head_dim>},
    {"intermediate_size", set_int<&M::set_ffn_hidden_size>},
    {"attention_bias", require_false},
    {"mlp_bias", require_false},
});

constexpr auto kMistralKeys = std::to_array<KeyRule>({
    {"head_dim", set_int<&M::set_head_dim>},
    {"intermediate_size", set_int<&M::set_ffn_hidden_size>},
    {"sliding_window", require_no_window},
});

constexpr auto kMixtralKeys = std::to_array<KeyRule>({
    {"head_dim", set_int<&M::set_head_dim>},
    {"intermediate_size", read_mixtral_ffn},
    {"num_local_experts", set_int<&M::set_num_experts>},
    {"num_experts_per_tok", set_int<&M::set_experts_per_token>},
    {"sliding_window", require_no_window},
});

// sliding_window is the window Qwen2 would use with use_sliding_window; without it, no effect.
constexpr auto kQwen2Keys = std::to_array<KeyRule>({
    {"head_dim", set_int<&M::set_head_dim>},
    {"intermediate_size", set_int<&M::set_ffn_hidden_size>},
    {"use_sliding_window", require_no_window},
    {"sliding_window", ignore},
    {"max_window_layers", ignore},
    {"layer_types", require_full_attention},
});

// Qwen2-MoE: Qwen2's keys and these.
constexpr auto kQwen2MoeKeys = std::to_array<KeyRule>({
    {"num_experts", set_int<&M::set_num_experts>},
    {"num_experts_per_tok", set_int<&M::set_experts_per_token>},
    {"moe_intermediate_size", set_int<&M::set_moe_ffn_hidden_size>},
    {"shared_expert_intermediate_size", read_shared_expert_ffn},
    {"decoder_sparse_step", require_one},
    {"mlp_only_layers", require_empty},
});

// MLA: qk_nope_head_dim is racksim's head_dim (the non-RoPE query/key part). transformers
// writes head_dim = qk_rope_head_dim for its RoPE code; the MLA keys already say it.
constexpr auto kDeepseekV3Keys = std::to_array<KeyRule>({
    {"intermediate_size", set_int<&M::set_ffn_hidden_size>},
    {"n_routed_experts", set_int<&M::set_num_experts>},
    {"num_experts_per_tok", set_int<&M::set_experts_per_token>},
    {"moe_intermediate_size", set_int<&M::set_moe_ffn_hidden_size>},
    {"n_shared_experts", set_int<&M::set_num_shared_experts>},
    {"first_k_dense_replace", set_int<&M::set_first_dense_layers>},
    {"moe_layer_freq", require_one},
    {"q_lora_rank", set_int_or_null<&M::set_q_lora_rank>},
    {"kv_lora_rank", set_int<&M::set_kv_lora_rank>},
    {"qk_rope_head_dim", set_int<&M::set_qk_rope_head_dim>},
    {"qk_nope_head_dim", set_int<&M::set_head_dim>},
    {"v_head_dim", set_int<&M::set_v_head_dim>},
    {"num_nextn_predict_layers", set_int<&M::set_mtp_depth>},
    {"attention_bias", require_false},
    {"head_dim", ignore},
    // group-limited routing: how many nodes a token's copies can reach
    {"n_group", set_int<&M::set_moe_expert_groups>},
    {"topk_group", set_int<&M::set_moe_groups_per_token>},
    // routing: how experts are scored, not how many run or where
    {"topk_method", ignore},
    {"scoring_func", ignore},
    {"routed_scaling_factor", ignore},
    {"aux_loss_alpha", ignore},
    {"seq_aux", ignore},
    {"ep_size", ignore},
});

struct Architecture {
  std::string_view name;
  std::span<const KeyRule> keys;
  std::span<const KeyRule> extra_keys = {};  // a variant's keys on top of its base's
};

const auto kArchitectures = std::to_array<Architecture>({
    {"LlamaForCausalLM", kLlamaKeys},
    {"MistralForCausalLM", kMistralKeys},
    {"MixtralForCausalLM", kMixtralKeys},
    {"Qwen2ForCausalLM", kQwen2Keys},
    {"Qwen2MoeForCausalLM", kQwen2Keys, kQwen2MoeKeys},
    {"DeepseekV3ForCausalLM", kDeepseekV3Keys},
});

const KeyRule* find_rule(std::span<const KeyRule> rules, std::string_view key) {
  for (const KeyRule& rule : rules) {
    if (rule.key == key) return &rule;
  }
  return nullptr;
}

std::string architecture_names() {
  std::string names;
  for (const Architecture& a : kArchitectures)
    names += (names.empty() ? "" : ", ") + std::string(a.name);
  return names;
}

const Architecture& architecture_of(const json& config) {
  const auto it = config.find("architectures");
  if (it == config.end()) {
    throw HfConfigError(
        "", fmt::format("no 'architectures' key: racksim reads {}", architecture_names()));
  }
  if (!it->is_array() || it->size() != 1 || !(*it)[0].is_string()) {
    throw HfConfigError("architectures", fmt::format("'architectures' is {}, expected a list "
                                                     "of one architecture name",
                                                     shown(*it)));
  }
  const std::string name = (*it)[0].get<std::string>();
  for (const Architecture& a : kArchitectures) {
    if (a.name == name) return a;
  }
  throw HfConfigError(
      "architectures",
      fmt::format("architecture '{}' is not one racksim reads ({})", name, architecture_names()));
}

// Qwen2-MoE's shared expert is one block of shared_expert_intermediate_size; racksim counts
// shared experts of the routed experts' width, so it must be a whole number of them.
void set_shared_experts(const Reading& r, config::Model* model) {
  if (!r.shared_expert_ffn || *r.shared_expert_ffn == 0) return;
  const int64_t expert = model->moe_ffn_hidden_size();
  if (expert <= 0 || *r.shared_expert_ffn % expert != 0) {
    throw HfConfigError("shared_expert_intermediate_size",
                        fmt::format("'shared_expert_intermediate_size' is {}, not a multiple of "
                                    "moe_intermediate_size {}: racksim counts shared experts "
                                    "of the routed experts' width",
                                    *r.shared_expert_ffn, expert));
  }
  model->set_num_shared_experts(*r.shared_expert_ffn / expert);
}

}  // namespace

config::Model model_from_hf_config(const json& config) {
  if (!config.is_object()) throw HfConfigError("", "a config.json holds one JSON object");
  const Architecture& arch = architecture_of(config);
  Reading r;
  r.model.set_activation(config::Model::SWIGLU);
  // Every architecture read here encodes positions with RoPE (their rope_theta key).
  r.model.set_position_encoding(config::Model::ROTARY);
  for (const auto& [key, value] : config.items()) {
    const KeyRule* rule = find_rule(arch.keys, key);
    if (rule == nullptr) rule = find_rule(arch.extra_keys, key);
    if (rule == nullptr) rule = find_rule(kCommonKeys, key);
    if (rule == nullptr) {
      throw HfConfigError(key, fmt::format("key '{}' is not one racksim knows for {}: it may "
                                           "change the model in a way racksim does not simulate",
                                           key, arch.name));
    }
    rule->read(key, value, r);
  }
  set_shared_experts(r, &r.model);
  r.model.set_source(fmt::format("Hugging Face config.json ({})", arch.name));
  return r.model;
}

std::vector<std::string> hf_architectures() {
  std::vector<std::string> names;
  for (const Architecture& a : kArchitectures) names.emplace_back(a.name);
  return names;
}

}  // namespace racksim
