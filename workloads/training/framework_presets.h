// Training frameworks as presets of the training fields that say how a framework runs the step
// (`training.framework`): how weight gradients are summed over micro-batches, in which dtype
// and when they are reduced, the optimizer's sharding, the attention and loss kernels, the TP
// communication overlap. A scenario's own fields win over its framework's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/scenario.pb.h"

namespace racksim {

struct FrameworkPreset {
  std::string name;    // e.g. "megatron-lm-2021"
  std::string what;    // the framework and version it follows, in a line
  std::string source;  // where its behaviour is documented
};

std::optional<FrameworkPreset> framework_preset(std::string_view name);
std::vector<std::string> framework_preset_names();

// The training fields `name` sets for `scenario` (nullopt for an unknown name). Some follow the
// scenario: the gradient reduce dtype from training.dtype, TP overlap only with sequence
// parallelism over tp > 1, so a framework never sets what the scenario cannot take.
std::optional<config::Training> framework_training(std::string_view name,
                                                   const config::Scenario& scenario);

// Why DeepSpeed's pipeline exchange (training.pipeline_exchange DEEPSPEED) cannot run this
// scenario, or nullopt: it is DeepSpeed's own 1F1B (an unset schedule counts as its default,
// 1F1B), with blocking transfers and no multi-token prediction. The megatron-deepspeed framework
// sets the exchange only where this is nullopt; validation refuses it with this reason.
std::optional<std::string> deepspeed_exchange_refusal(const config::Scenario& scenario);

}  // namespace racksim
