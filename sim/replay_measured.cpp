// Collectives timed from nccl-tests results measured on the hardware
// (hardware.collectives.measured_table) instead of the flow model.
#include <algorithm>

#include "sim/replay.h"

namespace racksim::sim {

const std::vector<topo::CollectiveSample>* Replay::measured_curve(const Op& op) const {
  const topo::MeasuredCollectives& table = options_.measured_collectives;
  // A skewed all-to-all is not what nccl-tests measures.
  if (table.empty() || op.weights != 0) return nullptr;
  const auto& members = graph_.communicator(op.peer);
  const auto* curve = table.find(to_string(op.collective), static_cast<int>(members.size()));
  if (curve == nullptr) return nullptr;
  const int domain = placement_.domain[members.front()];
  const bool one_domain = std::all_of(members.begin(), members.end(),
                                      [&](RankId r) { return placement_.domain[r] == domain; });
  return one_domain ? curve : nullptr;
}

}  // namespace racksim::sim
