// Checks of layout.pipeline_layout (Megatron-Core's explicit layer layout) against the model and
// the pipeline it names.
#pragma once

#include "config/scenario_checker.h"

namespace racksim::config {

// Throws InputError naming layout.pipeline_layout (or the field the layout conflicts with).
void check_pipeline_layout(const config::Scenario& scenario, const Sizes& sizes,
                           const Checker& check);

}  // namespace racksim::config
