// Checks of the scenario's faults section (docs/faults.md): every index inside the cluster
// (ranks, nodes, NIC ports), factors in range, and every GPU left with a NIC of its network.
#pragma once

#include "config/scenario_loader.h"

namespace racksim::config {

// Throws InputError naming the first offending field ("faults.straggler", ...), the entry and
// where it was written. Runs after the hardware section is checked.
void validate_faults(const config::Scenario& scenario, const SourceMap& sources);

}  // namespace racksim::config
