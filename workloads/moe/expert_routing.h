// Which experts the tokens of a MoE layer go to: the share of the layer's routed tokens each
// expert receives, and from that, each expert-parallel rank's share (its experts' sum).
#pragma once

#include <string>
#include <vector>

#include "proto/scenario.pb.h"

namespace racksim {

// Per-expert shares (summing to 1) of MoE layer `moe_layer` (0-based among the MoE layers):
// equal under BALANCED; 1/k^s over a seeded per-layer order under ZIPF; the file's token counts
// under FROM_FILE (a line per MoE layer, or one line for all; whitespace- or comma-separated).
// Throws InputError naming the file and line for a bad file.
std::vector<double> expert_shares(const config::Training& training, int64_t experts, int moe_layer);

// Rank j of `ep` holds experts [j E/ep, (j+1) E/ep): its share is the sum of theirs.
std::vector<double> rank_shares(const std::vector<double>& expert_shares, int ep);

// The most loaded rank's share over the mean: how much longer its experts take than balanced.
double imbalance(const std::vector<double>& rank_shares);

}  // namespace racksim
