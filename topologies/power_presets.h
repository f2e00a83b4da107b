// Power, price and reliability figures of the hardware presets (hardware.power, hardware.cost,
// hardware.reliability), each with its source; docs/plan.md tabulates them. Kept apart from
// hardware_presets.cpp, which merges them in: these figures change with the market and the
// fleet, the rest of a preset with the silicon.
#pragma once

#include <optional>
#include <string_view>

namespace racksim::topo {

// What every hardware section starts from, as protobuf text of a Hardware section: a PUE, a
// write-off period, an electricity price, and failure rates and checkpoint storage of a large
// H100 fleet (the Llama 3 paper).
std::string_view power_cost_defaults_text();

// The power and price figures of a hardware preset as text, or nullopt for a name without them.
std::optional<std::string_view> power_cost_preset_text(std::string_view preset);

}  // namespace racksim::topo
