#include "config/default_scenario.h"

namespace racksim::config {

std::string_view default_scenario_text() {
  static constexpr std::string_view kText =
#include "config/default_scenario.inc"
      ;
  return kText;
}

}  // namespace racksim::config
