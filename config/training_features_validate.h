// Checks of the training fields that switch a framework's behaviours on (overlaps, recompute
// modules, FP8 activations and parameters, deferred gradients, the pipeline exchange).
#pragma once

#include "config/scenario_checker.h"

namespace racksim::config {

// Throws InputError naming the first offending field.
void check_training_features(const config::Scenario& scenario, const Sizes& sizes,
                             const Checker& check);

}  // namespace racksim::config
