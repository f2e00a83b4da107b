// The checks of a scenario's hardware section (config/hardware_validate.cpp). validate_scenario
// runs them on a whole scenario; validate_hardware (scenario_loader.h) on a hardware file alone.
#pragma once

#include "config/scenario_checker.h"

namespace racksim::config {

// Fails through `check` on the first field that makes the hardware one racksim cannot simulate.
void check_hardware(const config::Hardware& hw, const Checker& check);

}  // namespace racksim::config
