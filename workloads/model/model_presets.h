// Named model presets with their published dimensions (docs/sources.md §8).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/scenario.pb.h"

namespace racksim {

// A preset by name ("gpt3-175b", "llama3-8b", "llama3-70b", "llama3-405b"), or nullopt.
std::optional<config::Model> model_preset(std::string_view name);
std::vector<std::string> model_preset_names();

}  // namespace racksim
