// The dependency structure of one rank's Chakra trace: node ids indexed, data_deps resolved
// to nodes of the file, and the order nodes are issued in.
//
// data_deps are the scheduling edges (as in Chakra's own feeder); ctrl_deps name call-tree
// parents (often ids not in the file) and are not edges. A data dependency on an id that is
// not in the file is dropped with a warning; a duplicate id or a cycle is an InputError naming
// the file and the node ids.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "traces/chakra_trace.h"

namespace racksim::chakra {

struct RankOrder {
  // Resolved dependencies, as node indices: node i's are deps[i == 0 ? 0 : dep_end[i-1],
  // dep_end[i]).
  std::vector<uint64_t> dep_end;
  std::vector<uint32_t> deps;
  // A topological order of the node indices; among the nodes that are ready at a time, the
  // smallest id comes first (Kahn's algorithm with a min-heap), so a trace already in
  // dependency order by id keeps its order.
  std::vector<uint32_t> order;
  uint64_t dangling = 0;       // data_deps on ids not in the file (dropped)
  uint64_t ctrl_dangling = 0;  // ctrl_deps on ids not in the file

  uint64_t deps_begin(uint32_t node) const { return node == 0 ? 0 : dep_end[node - 1]; }
};

RankOrder order_rank(const RankTable& table, std::vector<std::string>& warnings);

// Removes repeated values from [first, end of v), keeping the first of each in place: a
// trace's dependency order is kept, so a graph written and read back lists its dependencies
// as it did.
template <typename T>
void remove_repeats(std::vector<T>& v, size_t first) {
  std::vector<T> sorted(v.begin() + static_cast<std::ptrdiff_t>(first), v.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) return;  // the usual case
  std::unordered_set<T> seen;
  size_t out = first;
  for (size_t i = first; i < v.size(); ++i) {
    if (seen.insert(v[i]).second) v[out++] = v[i];
  }
  v.resize(out);
}

}  // namespace racksim::chakra
