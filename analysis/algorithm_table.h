// Which collective algorithm ran, per collective kind and parallel dimension (ring, NVLS,
// tree, ...), for the step and replay reports: the AUTO choice is otherwise silent (an
// all-reduce inside one NVLS-capable server runs NVLS on the default preset).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine.h"

namespace racksim::analysis {

// "Collective algorithms (...):" then one line per kind, e.g.
//   all_reduce       nvls on tp (1088 x, 4 ranks); ring on dp (32 x, 2 ranks)
// Empty when no collective moved data.
std::string algorithms_text(const std::vector<sim::AlgorithmUse>& uses);

// [{"kind", "dim", "algorithm", "collectives", "max_members"}, ...]
nlohmann::ordered_json algorithms_json(const std::vector<sim::AlgorithmUse>& uses);

}  // namespace racksim::analysis
