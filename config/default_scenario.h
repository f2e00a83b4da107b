// The scenario `racksim run` runs when given none: scenarios/default.textproto, compiled in.
#pragma once

#include <string_view>

namespace racksim::config {

inline constexpr std::string_view kDefaultScenarioPath = "scenarios/default.textproto (built in)";
std::string_view default_scenario_text();

}  // namespace racksim::config
