// Reading `model { hf_config: "config.json" }`: the file, its JSON, and the model it describes
// (config/hf_config.h). Errors name the config file and the line of the key at fault.
#pragma once

#include "config/scenario_loader.h"
#include "proto/scenario.pb.h"

namespace racksim::config {

// The model of the config.json that scenario.model.hf_config names (relative to the scenario
// file). Throws InputError: the file cannot be read, is not JSON, names an architecture racksim
// does not read, or has a key racksim does not know.
config::Model read_hf_config(const config::Scenario& scenario, const SourceMap& sources);

}  // namespace racksim::config
