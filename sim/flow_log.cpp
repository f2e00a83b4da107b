#include "sim/flow_log.h"

#include <algorithm>

namespace racksim::sim {

FlowLog::FlowLog(size_t max_intervals) : max_intervals_(std::max<size_t>(max_intervals, 16)) {}

void FlowLog::record(RankId source, RankId destination, double bytes, double start_s,
                     double end_s) {
  const uint64_t key = (static_cast<uint64_t>(source) << 32) | destination;
  auto [it, inserted] = pair_index_.try_emplace(key, pairs_.size());
  if (inserted) pairs_.push_back({source, destination, 0, 0, {}});
  PairTraffic& pair = pairs_[it->second];
  pair.bytes += bytes;
  ++pair.flows;
  insert(pair.busy, {start_s, std::max(start_s, end_s)});
  if (intervals_ > max_intervals_) coarsen();
}

// Inserts keeping `busy` sorted and disjoint; intervals closer than the resolution merge.
// Flows mostly complete in time order, so the work is at the back of the vector.
void FlowLog::insert(std::vector<BusyInterval>& busy, BusyInterval interval) {
  const double gap = resolution_s_;
  // The first interval that could touch the new one: the ends are sorted as well.
  auto first =
      std::lower_bound(busy.begin(), busy.end(), interval.start_s - gap,
                       [](const BusyInterval& b, double start) { return b.end_s < start; });
  auto last = first;
  while (last != busy.end() && last->start_s <= interval.end_s + gap) {
    interval.start_s = std::min(interval.start_s, last->start_s);
    interval.end_s = std::max(interval.end_s, last->end_s);
    ++last;
  }
  const size_t merged = static_cast<size_t>(last - first);
  if (merged == 0) {
    busy.insert(first, interval);
    ++intervals_;
    return;
  }
  *first = interval;
  busy.erase(first + 1, last);
  intervals_ -= merged - 1;
}

void FlowLog::coarsen() {
  while (intervals_ > max_intervals_ / 2) {
    resolution_s_ = resolution_s_ > 0 ? 2 * resolution_s_ : 1e-6;
    intervals_ = 0;
    for (PairTraffic& pair : pairs_) {
      std::vector<BusyInterval> merged;
      for (const BusyInterval& b : pair.busy) {
        if (!merged.empty() && b.start_s <= merged.back().end_s + resolution_s_) {
          merged.back().end_s = std::max(merged.back().end_s, b.end_s);
        } else {
          merged.push_back(b);
        }
      }
      intervals_ += merged.size();
      pair.busy = std::move(merged);
    }
  }
}

std::vector<PairTraffic> FlowLog::take_pairs() {
  std::vector<PairTraffic> out = std::move(pairs_);
  std::sort(out.begin(), out.end(), [](const PairTraffic& a, const PairTraffic& b) {
    return a.source != b.source ? a.source < b.source : a.destination < b.destination;
  });
  pairs_.clear();
  pair_index_.clear();
  intervals_ = 0;
  return out;
}

}  // namespace racksim::sim
