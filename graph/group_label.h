// A process group named by its ranks, for traces whose collectives carry no process-group name
// (ASTRA-sim's microbenchmarks, hand-written Chakra files) or a name that says nothing about
// the parallel dimension (PyTorch's "0", "1", ...): "group[8 ranks: 0,1,..,7]" (a regular
// stride shown by its first two ranks and its last), "group[3 ranks: 0,4,9]" (few ranks, all
// listed), "group[6 ranks: 0,1,5,..,12, irregular]".
#pragma once

#include <string>
#include <vector>

#include "graph/event_graph.h"

namespace racksim {

// `members` in ascending order.
std::string group_label(const std::vector<RankId>& members);

}  // namespace racksim
