// Collectives timed from nccl-tests results measured on the hardware
// (hardware.collectives.measured_table): analytic at the measured time, or, where flows run,
// flows that last at least that long.
#include <algorithm>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "sim/replay.h"

namespace racksim::sim {

namespace s4u = simgrid::s4u;

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

// The flows load the links as the model's would, and traffic beside them can slow them past the
// measurement; alone they end sooner (the model is faster than nccl-tests on an idle node), and
// then the measured time is what the collective takes.
void Replay::last_until_measured(double start_s, double measured_s) {
  const double rest_s = start_s + measured_s - s4u::Engine::get_clock();
  if (rest_s > 0) {
    ++activities_;
    s4u::this_actor::sleep_for(rest_s);
  }
}

}  // namespace racksim::sim
