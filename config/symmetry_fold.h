// Symmetry folding (sim.fold_replicas): simulate one data-parallel replica and let the others
// mirror it. Valid when every replica sees the same work and the same fabric: the same layout
// shape on uniform scale-up domains and NICs, and (MoE) the same expert loads. The replica's
// cross-replica collectives (gradient reduction, expert all-to-all spanning replicas) run on
// the real fabric from the analytic model (sim/analytic_model.h); its pipeline transfers,
// tensor- and context-parallel collectives run as flows at the scenario's fidelity.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proto/scenario.pb.h"
#include "workloads/training/layout.h"

namespace racksim::config {

// Why `scenario` (resolved) cannot be folded, or nothing when it can.
std::optional<std::string> fold_refusal(const config::Scenario& scenario);

// The ranks a folded run simulates: those of data-parallel replica 0.
std::vector<bool> folded_ranks(const ParallelLayout& layout);

}  // namespace racksim::config
