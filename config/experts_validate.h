// Checks of the mixture-of-experts model fields, expert parallelism and the expert placement.
#pragma once

#include "config/scenario_checker.h"

namespace racksim::config {

// Throws InputError naming the first offending field.
void check_experts(const config::Scenario& scenario, const Sizes& sizes, const Checker& check);

}  // namespace racksim::config
