// AGGREGATED fidelity's plan: a collective plan with every member's transfers to a peer merged
// into one flow per peer. Contention is still simulated, the step-by-step synchronisation is
// not; the engine adds the ring steps' latencies back as one sleep before the flows.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/collective_plan.h"

namespace racksim::sim {

class AggregatedPlan final : public CollectivePlan {
 public:
  AggregatedPlan(const CollectivePlan& full, uint32_t members);
  int num_phases() const override { return 1; }
  void sends(uint32_t member, int phase, std::vector<Transfer>* out) const override;
  uint32_t arrivals(uint32_t member, int) const override { return arrivals_[member]; }

 private:
  std::vector<std::vector<Transfer>> sends_;
  std::vector<uint32_t> arrivals_;
};

}  // namespace racksim::sim
