// Filling a parsed scenario's unset fields (config/scenario_presets.cpp); resolve_presets, the
// step every loader runs, is declared in config/scenario_loader.h.
#pragma once

#include "config/scenario_loader.h"

namespace racksim::config {

// Records the fields the model preset and the framework give that the scenario leaves unset as
// coming from them, so that an error on one names the preset ("model preset 'gpt3-175b'
// (inherited; set model.num_kv_heads to override it)") instead of a line the user did not write.
// Runs before resolve_presets, which fills them.
void note_preset_sources(const config::Scenario& scenario, SourceMap* sources);

}  // namespace racksim::config
