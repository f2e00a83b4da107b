#include "workloads/moe/expert_placement.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace racksim {

namespace {

// Experts ordered by share, hottest first (ties by index, deterministic).
std::vector<int> by_share_descending(const std::vector<double>& shares) {
  std::vector<int> order(shares.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return shares[a] > shares[b]; });
  return order;
}

ExpertPlacementMap empty_map(size_t experts, int ranks) {
  ExpertPlacementMap map;
  map.ranks = ranks;
  map.share.assign(experts, std::vector<double>(ranks, 0.0));
  return map;
}

ExpertPlacementMap round_robin(size_t experts, int ranks) {
  ExpertPlacementMap map = empty_map(experts, ranks);
  for (size_t e = 0; e < experts; ++e) map.share[e][e % ranks] = 1;
  return map;
}

// Greedy longest-processing-time: the heaviest unplaced expert to the least loaded rank that
// still has a slot.
ExpertPlacementMap by_load(const std::vector<double>& shares, int ranks) {
  ExpertPlacementMap map = empty_map(shares.size(), ranks);
  const size_t slots = shares.size() / ranks;
  std::vector<double> load(ranks, 0.0);
  std::vector<size_t> used(ranks, 0);
  for (int e : by_share_descending(shares)) {
    int best = -1;
    for (int j = 0; j < ranks; ++j) {
      if (used[j] < slots && (best < 0 || load[j] < load[best])) best = j;
    }
    map.share[e][best] = 1;
    load[best] += shares[e];
    ++used[best];
  }
  return map;
}

// Groups experts per node by co-occurrence (greedy: a node is seeded with the hottest unplaced
// expert and filled with the experts most often chosen with those already on it), then spreads
// each node's experts over its ranks by load.
ExpertPlacementMap by_cooccurrence(const std::vector<double>& shares, int ranks, int ranks_per_node,
                                   const CoOccurrence& co) {
  // A partial last group (256 ranks in domains of 72) holds experts in proportion to its ranks.
  const int nodes = (ranks + ranks_per_node - 1) / ranks_per_node;
  const size_t per_rank = shares.size() / static_cast<size_t>(ranks);
  std::vector<bool> placed(shares.size(), false);
  ExpertPlacementMap map = empty_map(shares.size(), ranks);
  const auto order = by_share_descending(shares);
  for (int n = 0; n < nodes; ++n) {
    const int node_ranks = std::min(ranks_per_node, ranks - n * ranks_per_node);
    const size_t per_node = per_rank * static_cast<size_t>(node_ranks);
    std::vector<int> members;
    for (int e : order) {
      if (!placed[e]) {
        members.push_back(e);
        placed[e] = true;
        break;
      }
    }
    while (members.size() < per_node) {
      int best = -1;
      double best_score = -1;
      for (int e : order) {
        if (placed[e]) continue;
        double score = 0;
        for (int m : members) score += co[e][m];
        if (score > best_score) best = e, best_score = score;
      }
      members.push_back(best);
      placed[best] = true;
    }
    std::vector<double> node_shares;
    for (int e : members) node_shares.push_back(shares[e]);
    const ExpertPlacementMap inner = by_load(node_shares, node_ranks);
    for (size_t i = 0; i < members.size(); ++i) {
      for (int j = 0; j < node_ranks; ++j) {
        map.share[members[i]][n * ranks_per_node + j] = inner.share[i][j];
      }
    }
  }
  return map;
}

// Replicas of the hottest experts in `extra` slots per rank: each replica goes to the rank with
// the least load that does not hold the expert; the expert's tokens split evenly.
void add_replicas(ExpertPlacementMap* map, const std::vector<double>& shares, int extra) {
  const int ranks = map->ranks;
  const auto order = by_share_descending(shares);
  const size_t replicas = std::min<size_t>(order.size(), static_cast<size_t>(extra) * ranks);
  std::vector<int> copies(shares.size(), 1);
  std::vector<size_t> extra_used(ranks, 0);
  for (size_t i = 0; i < replicas; ++i) {
    const int e = order[i];
    const auto load = placed_rank_shares(*map, shares);
    int best = -1;
    for (int j = 0; j < ranks; ++j) {
      if (map->share[e][j] > 0 || extra_used[j] >= static_cast<size_t>(extra)) continue;
      if (best < 0 || load[j] < load[best]) best = j;
    }
    if (best < 0) continue;
    ++copies[e];
    ++extra_used[best];
    map->share[e][best] = 1;
    for (double& s : map->share[e]) s = s > 0 ? 1.0 / copies[e] : 0;
  }
}

}  // namespace

std::vector<int> ExpertPlacementMap::experts_on_rank() const {
  std::vector<int> count(ranks, 0);
  for (const auto& row : share) {
    for (int j = 0; j < ranks; ++j) count[j] += row[j] > 0 ? 1 : 0;
  }
  return count;
}

ExpertPlacementMap contiguous_placement(int64_t experts, int ranks) {
  ExpertPlacementMap map = empty_map(static_cast<size_t>(experts), ranks);
  for (int64_t e = 0; e < experts; ++e) map.share[e][e * ranks / experts] = 1;
  return map;
}

ExpertPlacementMap place_experts(const config::ExpertPlacement& placement,
                                 const std::vector<double>& shares, int ranks, int ranks_per_node,
                                 const CoOccurrence& cooccurrence) {
  if (ranks <= 0 || shares.size() % static_cast<size_t>(ranks) != 0) {
    throw std::invalid_argument(fmt::format(
        "expert placement: {} experts do not split over {} ranks", shares.size(), ranks));
  }
  ExpertPlacementMap map;
  switch (placement.strategy()) {
    case config::ExpertPlacement::ROUND_ROBIN:
      map = round_robin(shares.size(), ranks);
      break;
    case config::ExpertPlacement::BY_LOAD:
      map = by_load(shares, ranks);
      break;
    case config::ExpertPlacement::BY_COOCCURRENCE:
      map = cooccurrence.empty() || ranks_per_node >= ranks
                ? by_load(shares, ranks)
                : by_cooccurrence(shares, ranks, ranks_per_node, cooccurrence);
      break;
    default:
      map = contiguous_placement(static_cast<int64_t>(shares.size()), ranks);
  }
  if (placement.redundant_per_rank() > 0)
    add_replicas(&map, shares, placement.redundant_per_rank());
  return map;
}

std::vector<double> placed_rank_shares(const ExpertPlacementMap& map,
                                       const std::vector<double>& shares) {
  std::vector<double> load(map.ranks, 0.0);
  for (size_t e = 0; e < shares.size(); ++e) {
    for (int j = 0; j < map.ranks; ++j) load[j] += shares[e] * map.share[e][j];
  }
  return load;
}

double expected_touched_experts(const ExpertPlacementMap& map, const std::vector<double>& shares,
                                int rank, double routed_tokens) {
  double touched = 0;
  for (size_t e = 0; e < shares.size(); ++e) {
    const double p = shares[e] * map.share[e][rank];
    if (p > 0) touched += 1 - std::pow(1 - std::min(1.0, p), routed_tokens);
  }
  return touched;
}

double crossing_share(const ExpertPlacementMap& map, const std::vector<double>& shares, int group) {
  // Every rank sends the same number of token copies; a copy goes to rank j with probability
  // load_j. It stays when j is in the sender's group.
  const auto load = placed_rank_shares(map, shares);
  double staying = 0;
  for (int i = 0; i < map.ranks; ++i) {
    for (int j = 0; j < map.ranks; ++j) {
      if (i / group == j / group) staying += load[j];
    }
  }
  return 1 - staying / map.ranks;
}

}  // namespace racksim
