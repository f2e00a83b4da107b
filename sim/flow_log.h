// What the network carried: per (source rank, destination rank) pair, the bytes of every flow
// the replay completed and the intervals during which at least one of the pair's flows was in
// flight. Analysis maps pairs to links with the topology's router after the simulation (the
// route of a pair is deterministic), so the engine never stores per-link data.
//
// Intervals are appended as flows complete and sorted and merged per pair in batches (when a
// pair's list doubles, and at the end): the replay may complete flows out of time order (streams
// run ahead of SimGrid's clock), and inserting each in place cost 7% of the seed case's CPU.
// Memory stays bounded on huge runs: overlapping or touching intervals of a pair are merged in
// those batches, and when the log holds more than its interval budget, intervals closer than a
// resolution are merged too (the resolution doubles until the log fits in half the budget).
// Busy time is then exact up to that resolution (reported, 0 when exact).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graph/event_graph.h"

namespace racksim::sim {

struct BusyInterval {
  double start_s = 0;
  double end_s = 0;
};

struct PairTraffic {
  RankId source = 0;
  RankId destination = 0;
  double bytes = 0;
  uint64_t flows = 0;
  std::vector<BusyInterval> busy;  // sorted, disjoint
};

class FlowLog {
 public:
  explicit FlowLog(size_t max_intervals = size_t{1} << 22);

  void record(RankId source, RankId destination, double bytes, double start_s, double end_s);

  // The pairs sorted by (source, destination).
  std::vector<PairTraffic> take_pairs();
  // 0 when the intervals are exact; else the gap below which intervals were merged.
  double resolution_s() const { return resolution_s_; }

 private:
  // Sorts and merges pair `index`'s intervals (closer than the resolution count as touching).
  void normalize(size_t index);
  void normalize_all();
  void coarsen();

  size_t max_intervals_;
  size_t intervals_ = 0;
  double resolution_s_ = 0;
  std::vector<PairTraffic> pairs_;
  std::vector<size_t> merged_size_;  // per pair: its interval count after its last merge
  std::unordered_map<uint64_t, size_t> pair_index_;
};

}  // namespace racksim::sim
