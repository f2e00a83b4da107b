// Files a scenario names (a calibration, a Hugging Face config.json): where to read them.
#pragma once

#include <filesystem>
#include <string>

#include "config/scenario_loader.h"

namespace racksim::config {

// `name` as given by the scenario field `field`: an absolute path as is; a relative one from the
// folder of the file that wrote it (the scenario, or a calibration file it includes), or from
// the working directory when --set gave it (or the scenario is built in).
std::filesystem::path path_from_scenario(const std::string& name, const std::string& field,
                                         const SourceMap& sources);

}  // namespace racksim::config
