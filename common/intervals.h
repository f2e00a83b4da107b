// The length of a union of time intervals: how long a stream was busy when its operations
// overlap (a recorded trace's kernels, a replay's operations).
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

namespace racksim {

// Total length covered by the [from, to) intervals; 0 for none.
inline double union_length(std::vector<std::pair<double, double>> spans) {
  if (spans.empty()) return 0;
  std::sort(spans.begin(), spans.end());
  double total = 0, from = spans.front().first, to = spans.front().second;
  for (const auto& [a, b] : spans) {
    if (a > to) {
      total += to - from;
      from = a;
    }
    to = std::max(to, b);
  }
  return total + (to - from);
}

}  // namespace racksim
