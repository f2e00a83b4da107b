#include "config/hardware_loader.h"

namespace racksim::config {

LoadedScenario load_hardware_preset(const std::string& preset, int nodes,
                                    const std::vector<std::string>& overrides,
                                    const OverrideFilter& filter) {
  LoadedScenario loaded;
  loaded.sources.set_file("command line");
  config::Hardware* hardware = loaded.scenario.mutable_hardware();
  hardware->set_preset(preset);
  if (nodes > 0) hardware->set_nodes(nodes);
  for (const std::string& assignment : overrides) {
    if (filter && !filter(assignment)) continue;
    apply_override(assignment, &loaded.scenario, &loaded.sources);
  }
  resolve_presets(&loaded.scenario, loaded.sources);
  validate_hardware(loaded.scenario.hardware(), loaded.sources);
  return loaded;
}

}  // namespace racksim::config
