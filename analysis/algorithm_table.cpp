#include "analysis/algorithm_table.h"

#include <fmt/format.h>

namespace racksim::analysis {

std::string algorithms_text(const std::vector<sim::AlgorithmUse>& uses) {
  if (uses.empty()) return "";
  std::string out = "\nCollective algorithms (per kind, as run):\n";
  for (size_t i = 0; i < uses.size(); ++i) {
    const sim::AlgorithmUse& u = uses[i];
    const bool first_of_kind = i == 0 || uses[i - 1].kind != u.kind;
    out += first_of_kind ? fmt::format("  {:<16}", to_string(u.kind)) : std::string("; ");
    out += fmt::format("{} on {} ({} x, {} ranks)", sim::to_string(u.algorithm), to_string(u.dim),
                       u.collectives, u.max_members);
    if (i + 1 == uses.size() || uses[i + 1].kind != u.kind) out += "\n";
  }
  return out;
}

nlohmann::ordered_json algorithms_json(const std::vector<sim::AlgorithmUse>& uses) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const sim::AlgorithmUse& u : uses) {
    j.push_back({{"kind", std::string(to_string(u.kind))},
                 {"dim", std::string(to_string(u.dim))},
                 {"algorithm", std::string(sim::to_string(u.algorithm))},
                 {"collectives", u.collectives},
                 {"max_members", u.max_members}});
  }
  return j;
}

}  // namespace racksim::analysis
