// The workload of an nccl-tests-style benchmark: `ranks` ranks run one collective per size,
// back to back on one communicator. Each collective starts when the last rank has finished the
// previous one (a collective waits for all its members), so every size is timed on an idle
// network.
#pragma once

#include <vector>

#include "graph/event_graph.h"

namespace racksim {

// Sizes from min_bytes to max_bytes, doubling (nccl-tests -b/-e/-f 2). Throws on bad bounds.
std::vector<double> doubling_sizes(double min_bytes, double max_bytes);

EventGraph collective_sweep_graph(CollectiveKind kind, uint32_t ranks,
                                  const std::vector<double>& sizes);

}  // namespace racksim
