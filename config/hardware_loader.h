// The hardware section alone, for the commands that take a preset name instead of a scenario
// (`racksim collective`, `replay`, `topo`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/scenario_loader.h"

namespace racksim::config {

// Decides what to do with one --set assignment before it is applied: true applies it, false
// skips it (another reader takes it), a throw refuses it.
using OverrideFilter = std::function<bool(const std::string& assignment)>;

// The hardware preset `preset` with `nodes` nodes (<= 0: the preset's own) and the command
// line's overrides (each shown first to `filter` when there is one) applied, presets resolved
// and the hardware checked; errors name "command line" or the --set. The measured collective
// table is not read: read_measured_table does, for the commands that simulate collectives.
LoadedScenario load_hardware_preset(const std::string& preset, int nodes,
                                    const std::vector<std::string>& overrides,
                                    const OverrideFilter& filter = nullptr);

}  // namespace racksim::config
