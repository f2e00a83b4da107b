#include "sim/aggregated_plan.h"

#include <algorithm>
#include <map>

namespace racksim::sim {

AggregatedPlan::AggregatedPlan(const CollectivePlan& full, uint32_t members)
    : sends_(members), arrivals_(members, 0) {
  std::vector<Transfer> out;
  for (uint32_t m = 0; m < members; ++m) {
    std::map<uint32_t, double> per_peer;
    double cap = 0;  // a rate cap applies to all of a plan's flows alike (NVLS)
    for (int k = 0; k < full.num_phases(); ++k) {
      out.clear();
      full.sends(m, k, &out);
      for (const Transfer& t : out) {
        per_peer[t.to] += t.bytes;
        cap = std::max(cap, t.max_bytes_per_s);
      }
    }
    for (const auto& [peer, bytes] : per_peer) {
      sends_[m].push_back({peer, bytes, cap});
      ++arrivals_[peer];
    }
  }
}

void AggregatedPlan::sends(uint32_t member, int, std::vector<Transfer>* out) const {
  out->insert(out->end(), sends_[member].begin(), sends_[member].end());
}

}  // namespace racksim::sim
