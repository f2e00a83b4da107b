#include "analysis/measurement_floor.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

namespace racksim::analysis {

namespace {

// Rows of one family at one micro-batch (repeated measurements share one closest time).
struct Position {
  double micro_batch = 0;
  std::vector<size_t> rows;
};

double position_cost(const Position& p, const std::vector<MicroBatchRow>& rows, double value) {
  double cost = 0;
  for (size_t r : p.rows) cost += std::abs(value / rows[r].measured_s - 1);
  return cost;
}

// The step times, one per position (micro-batch ascending), that do not rise with the
// micro-batch and minimise the summed relative error. Candidates are the family's measured
// values, largest first, so "does not rise" is "candidate index does not fall".
std::vector<double> closest_non_rising(const std::vector<Position>& positions,
                                       const std::vector<MicroBatchRow>& rows) {
  std::vector<double> values;
  for (const Position& p : positions) {
    for (size_t r : p.rows) values.push_back(rows[r].measured_s);
  }
  std::sort(values.begin(), values.end(), std::greater<>());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  const size_t n = positions.size(), m = values.size();
  std::vector<std::vector<double>> cost(n, std::vector<double>(m));
  std::vector<std::vector<size_t>> from(n, std::vector<size_t>(m, 0));
  for (size_t p = 0; p < n; ++p) {
    double best = std::numeric_limits<double>::infinity();
    size_t best_at = 0;
    for (size_t c = 0; c < m; ++c) {
      if (p > 0 && cost[p - 1][c] < best) {
        best = cost[p - 1][c];
        best_at = c;
      }
      cost[p][c] = position_cost(positions[p], rows, values[c]) + (p > 0 ? best : 0);
      from[p][c] = best_at;
    }
  }
  std::vector<double> closest(n);
  size_t c = static_cast<size_t>(std::min_element(cost[n - 1].begin(), cost[n - 1].end()) -
                                 cost[n - 1].begin());
  for (size_t p = n; p-- > 0;) {
    closest[p] = values[c];
    c = from[p][c];
  }
  return closest;
}

std::vector<Position> positions_of(std::vector<size_t> family,
                                   const std::vector<MicroBatchRow>& rows) {
  std::stable_sort(family.begin(), family.end(),
                   [&](size_t a, size_t b) { return rows[a].micro_batch < rows[b].micro_batch; });
  std::vector<Position> positions;
  for (size_t r : family) {
    if (positions.empty() || positions.back().micro_batch != rows[r].micro_batch) {
      positions.push_back({rows[r].micro_batch, {}});
    }
    positions.back().rows.push_back(r);
  }
  return positions;
}

}  // namespace

MicroBatchFloor micro_batch_floor(const std::vector<MicroBatchRow>& rows) {
  MicroBatchFloor floor;
  floor.closest_s.resize(rows.size());
  std::map<std::string, std::vector<size_t>> families;
  for (size_t i = 0; i < rows.size(); ++i) {
    floor.closest_s[i] = rows[i].measured_s;
    if (!rows[i].pipelined && rows[i].measured_s > 0) families[rows[i].family].push_back(i);
  }
  double error = 0;
  for (const auto& [name, members] : families) {
    if (members.size() < 2) continue;
    const std::vector<Position> positions = positions_of(members, rows);
    ++floor.families;
    const std::vector<double> closest = closest_non_rising(positions, rows);
    double family_error = 0;
    for (size_t p = 0; p < positions.size(); ++p) {
      for (size_t r : positions[p].rows) floor.closest_s[r] = closest[p];
      family_error += position_cost(positions[p], rows, closest[p]);
    }
    if (family_error > 0) ++floor.families_broken;
    error += family_error;
  }
  if (!rows.empty()) floor.mean_abs_relative = error / static_cast<double>(rows.size());
  return floor;
}

}  // namespace racksim::analysis
