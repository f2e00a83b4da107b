// Named hardware presets (HGX/DGX servers, NVL72 racks, an AMD mesh), with the source of every
// figure.
// Figures come from data/hardware.csv and docs/sources.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/scenario.pb.h"

namespace racksim::topo {

// The defaults every hardware section starts from (efficiencies, latencies, fabric shape);
// a preset and then the scenario override them.
config::Hardware hardware_defaults();

// A preset by name ("dgx-a100", "dgx-h100", "dgx-h200", "hgx-h800", "hgx-b200", "hgx-b300",
// "hgx-b300-mixed-nics", "gb200-nvl72", "gb300-nvl72", "mi300x"), or nullopt if unknown. The
// preset includes the defaults.
std::optional<config::Hardware> hardware_preset(std::string_view name);
std::vector<std::string> hardware_preset_names();

}  // namespace racksim::topo
