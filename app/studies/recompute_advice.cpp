#include "app/studies/recompute_advice.h"

#include <algorithm>
#include <utility>

#include "workloads/training/memory_ledger.h"
#include "workloads/training/training_plan.h"

namespace racksim {

namespace {

// The scenario with full recompute of the first `layers` layers of each chunk.
config::Scenario with_block_recompute(config::Scenario scenario, int layers) {
  config::Training* t = scenario.mutable_training();
  t->set_recompute(config::Training::FULL);
  t->clear_recompute_modules();
  t->set_recompute_method(config::Training::BLOCK);
  t->set_recompute_num_layers(layers);
  return scenario;
}

MemoryLedger fullest_ledger(const config::Scenario& scenario) {
  return worst_memory_ledger(resolve_training_plan(scenario));
}

// The most layers any model chunk holds: recomputing that many takes every layer.
int most_layers_of_a_chunk(const TrainingPlan& plan) {
  int most = 0;
  for (int stage = 0; stage < plan.map.stages(); ++stage) {
    for (int chunk = 0; chunk < plan.map.chunks_per_stage(); ++chunk) {
      most = std::max(most, plan.map.layers({stage, chunk}).count);
    }
  }
  return most;
}

// The smallest count in [1, most] whose ledger passes `good`, and that ledger, given `most`'s
// ledger, which passes.
std::pair<int, MemoryLedger> fewest_layers(const config::Scenario& scenario, int most,
                                           MemoryLedger most_ledger,
                                           bool (MemoryLedger::*good)() const) {
  // One more layer taken frees its activations for every pass in flight; the transient can grow
  // only where layers differ (the largest taken layer's). The counts that pass are taken to be a
  // range ending at `most`: bisect for its start.
  int low = 0;  // fails, or stands for the scenario's own recompute
  std::pair<int, MemoryLedger> high{most, std::move(most_ledger)};
  while (high.first - low > 1) {
    const int mid = (low + high.first) / 2;
    MemoryLedger ledger = fullest_ledger(with_block_recompute(scenario, mid));
    if ((ledger.*good)()) {
      high = {mid, std::move(ledger)};
    } else {
      low = mid;
    }
  }
  return high;
}

}  // namespace

std::optional<BlockRecomputeAdvice> least_block_recompute(const config::Scenario& scenario,
                                                          const TrainingPlan& plan,
                                                          const MemoryLedger& fullest_rank) {
  if (scenario.training().moe_a2a_overlap() || fullest_rank.fits()) return std::nullopt;
  const int most = most_layers_of_a_chunk(plan);
  if (most == 0) return std::nullopt;
  MemoryLedger all = fullest_ledger(with_block_recompute(scenario, most));
  if (!all.fits()) return std::nullopt;
  // With the ledger's headroom where some count leaves it, else the fewest that fit at all.
  const auto good =
      all.fits_with_headroom() ? &MemoryLedger::fits_with_headroom : &MemoryLedger::fits;
  const auto [layers, ledger] = fewest_layers(scenario, most, std::move(all), good);
  return BlockRecomputeAdvice{layers, ledger.peak_bytes(), ledger.capacity_bytes,
                              scenario.training().recompute_modules_size() > 0};
}

}  // namespace racksim
