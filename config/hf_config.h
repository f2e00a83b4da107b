// A Hugging Face config.json (the JSON object, already parsed) as a racksim Model.
//
// Architectures read: LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM,
// Qwen2ForCausalLM, Qwen2MoeForCausalLM, DeepseekV3ForCausalLM. Every key of the object must be
// one racksim maps to a Model field (hidden_size, num_hidden_layers, MoE and MLA sizes, ...), or
// one known not to change the parameters, FLOPs or memory racksim models (rope_theta, token
// ids, torch_dtype, routing details, ...), or one whose value leaves the model as racksim models
// it (attention_bias: false, sliding_window: null, moe_layer_freq: 1, ...). Anything else is an
// error naming the key: a config racksim would silently simulate wrong is worse than none.
//
// Not modelled, hence not in the parameter count: Qwen2's query/key/value biases and the
// Qwen2-MoE shared expert's one-unit gate (both under 0.1 % of the parameters).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "proto/scenario.pb.h"

namespace racksim {

// What is wrong with a config.json, and the top-level key it is about ("architectures" for an
// architecture racksim does not read; empty when it is about the whole object).
class HfConfigError : public std::runtime_error {
 public:
  HfConfigError(std::string key, const std::string& message)
      : std::runtime_error(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// The model the config describes. Fields the config does not give stay unset (the scenario's
// defaults fill them: head_dim = hidden / heads, ...). `source` names the architecture.
// Throws HfConfigError.
config::Model model_from_hf_config(const nlohmann::json& config);

std::vector<std::string> hf_architectures();

}  // namespace racksim
