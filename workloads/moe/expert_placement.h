// Logical expert -> GPU maps for expert parallelism, and what a map costs: each rank's share of
// the routed tokens (the slowest rank sets the expert time), the imbalance factor, and the share
// of the dispatch traffic that leaves a node.
//
// A placement is a table share[e][j]: the fraction of expert e's tokens that rank j serves (1 on
// the rank holding it; 1/r on each of its r replicas).
#pragma once

#include <cstdint>
#include <vector>

#include "proto/scenario.pb.h"

namespace racksim {

struct ExpertPlacementMap {
  int ranks = 0;
  std::vector<std::vector<double>> share;  // [expert][rank]
  // Experts each rank holds (replicas included): it reads their weights.
  std::vector<int> experts_on_rank() const;
};

// Pairs of experts chosen together by one token: cooccurrence[a][b] (symmetric, a != b).
using CoOccurrence = std::vector<std::vector<double>>;

// The map `placement` asks for over `ranks` ranks, `ranks_per_node` of them per node, for
// experts with the given token shares. BY_COOCCURRENCE uses `cooccurrence` (empty: it falls back
// to BY_LOAD). Redundant slots go to the hottest experts, one replica each, hottest first.
ExpertPlacementMap place_experts(const config::ExpertPlacement& placement,
                                 const std::vector<double>& expert_shares, int ranks,
                                 int ranks_per_node, const CoOccurrence& cooccurrence = {});

ExpertPlacementMap contiguous_placement(int64_t experts, int ranks);

// Each rank's share of the routed tokens under the map.
std::vector<double> placed_rank_shares(const ExpertPlacementMap& map,
                                       const std::vector<double>& expert_shares);

// Expected number of distinct experts (replicas counted where they sit) rank j runs when
// `routed_tokens` token copies are routed: each copy picks expert e with probability share_e.
// Weights of untouched experts are not read, which is why a MoE decodes batch 1 faster than
// its total weights suggest.
double expected_touched_experts(const ExpertPlacementMap& map,
                                const std::vector<double>& expert_shares, int rank,
                                double routed_tokens);

// Share of the dispatch bytes that cross a boundary of `group` ranks (node or scale-up domain)
// when every rank sends its tokens to the experts' ranks: 1 - (expected bytes staying in the
// sender's group). For the contiguous/round-robin map under balanced routing it is
// 1 - group / ranks (ranks >= group).
double crossing_share(const ExpertPlacementMap& map, const std::vector<double>& expert_shares,
                      int group);

}  // namespace racksim
