// Checks of hardware.power, hardware.cost and hardware.reliability (docs/plan.md): every watt,
// price, rate, bandwidth and duration is a finite number >= 0, and the PUE is >= 1.
#pragma once

#include "config/scenario_loader.h"

namespace racksim::config {

// Throws InputError naming the first offending field and where it was written.
void validate_power_cost(const config::Hardware& hardware, const SourceMap& sources);

}  // namespace racksim::config
