// The fewest layers full recompute must take for a scenario that does not fit to fit: Megatron-
// Core's block method (training.recompute_method BLOCK), searched on the memory ledger without
// simulating. What `racksim memory` suggests when the fullest rank runs out of memory.
#pragma once

#include <optional>

#include "proto/scenario.pb.h"
#include "workloads/training/memory_ledger.h"
#include "workloads/training/training_plan.h"

namespace racksim {

struct BlockRecomputeAdvice {
  int num_layers = 0;     // training.recompute_num_layers: the first this many of each chunk
  double peak_bytes = 0;  // the fullest rank's peak with them recomputed
  double capacity_bytes = 0;
  // The scenario lists selective recompute's modules, which full recompute replaces: the
  // suggestion empties the list.
  bool clears_recompute_modules = false;
};

// The smallest N for which the fullest rank fits with full recompute of the first N layers of
// each model chunk, with the headroom under which the report calls a fit marginal
// (kMarginalSpareBytes) where some N leaves it, else at all; nullopt when it fits as it stands,
// when even every layer recomputed does not fit, or when the scenario cannot run full recompute
// (Megatron-Core's combined 1F1B, training.moe_a2a_overlap, refuses it). The rest of the scenario
// stays as it is, selective recompute's modules aside (full recompute replaces them). `plan` is
// the scenario's resolved plan and `fullest_rank` its fullest rank's ledger, as the caller has
// them.
std::optional<BlockRecomputeAdvice> least_block_recompute(const config::Scenario& scenario,
                                                          const TrainingPlan& plan,
                                                          const MemoryLedger& fullest_rank);

}  // namespace racksim
