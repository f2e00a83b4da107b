#include "sim/flow_log.h"

#include <algorithm>

namespace racksim::sim {

FlowLog::FlowLog(size_t max_intervals) : max_intervals_(std::max<size_t>(max_intervals, 16)) {}

void FlowLog::record(RankId source, RankId destination, double bytes, double start_s,
                     double end_s) {
  const uint64_t key = (static_cast<uint64_t>(source) << 32) | destination;
  auto [it, inserted] = pair_index_.try_emplace(key, pairs_.size());
  if (inserted) {
    pairs_.push_back({source, destination, 0, 0, {}});
    merged_size_.push_back(0);
  }
  const size_t index = it->second;
  PairTraffic& pair = pairs_[index];
  pair.bytes += bytes;
  ++pair.flows;
  pair.busy.push_back({start_s, std::max(start_s, end_s)});
  ++intervals_;
  if (pair.busy.size() >= 2 * merged_size_[index] + 64) normalize(index);
  if (intervals_ > max_intervals_) {
    normalize_all();
    // Coarsen with headroom, so that merging everything does not repeat every few flows.
    if (intervals_ > max_intervals_ / 4 * 3) coarsen();
  }
}

void FlowLog::normalize(size_t index) {
  std::vector<BusyInterval>& busy = pairs_[index].busy;
  intervals_ -= busy.size();
  std::sort(busy.begin(), busy.end(),
            [](const BusyInterval& a, const BusyInterval& b) { return a.start_s < b.start_s; });
  size_t kept = 0;
  for (const BusyInterval& b : busy) {
    if (kept > 0 && b.start_s <= busy[kept - 1].end_s + resolution_s_) {
      busy[kept - 1].end_s = std::max(busy[kept - 1].end_s, b.end_s);
    } else {
      busy[kept++] = b;
    }
  }
  busy.resize(kept);
  merged_size_[index] = kept;
  intervals_ += kept;
}

void FlowLog::normalize_all() {
  for (size_t i = 0; i < pairs_.size(); ++i) normalize(i);
}

void FlowLog::coarsen() {
  while (intervals_ > max_intervals_ / 2) {
    resolution_s_ = resolution_s_ > 0 ? 2 * resolution_s_ : 1e-6;
    normalize_all();
  }
}

std::vector<PairTraffic> FlowLog::take_pairs() {
  normalize_all();
  std::vector<PairTraffic> out = std::move(pairs_);
  std::sort(out.begin(), out.end(), [](const PairTraffic& a, const PairTraffic& b) {
    return a.source != b.source ? a.source < b.source : a.destination < b.destination;
  });
  pairs_.clear();
  merged_size_.clear();
  pair_index_.clear();
  intervals_ = 0;
  return out;
}

}  // namespace racksim::sim
