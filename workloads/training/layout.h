// The parallel layout: how ranks are split into tensor (TP), context (CP), data (DP) and
// pipeline (PP) parallel groups.
//
// Ranks are numbered with TP fastest, then CP, then DP, then PP (Megatron's default order), so
// that TP groups sit inside a server and pipeline stages are furthest apart:
//   rank = tp + TP * (cp + CP * (dp + DP * pp))
#pragma once

#include <cstdint>
#include <vector>

#include "graph/event_graph.h"
#include "proto/scenario.pb.h"

namespace racksim {

struct RankCoords {
  int tp = 0;
  int cp = 0;
  int dp = 0;
  int pp = 0;
};

class ParallelLayout {
 public:
  // `ep`: expert parallelism. Expert layers re-split the tp x cp x dp ranks of a stage into
  // expert-parallel groups of ep consecutive ranks (Megatron-core's expert rank order), the
  // rest replicating the experts (expert data parallelism).
  ParallelLayout(int tp, int cp, int dp, int pp, int ep = 1);
  static ParallelLayout from_config(const config::Layout& layout);

  int tp() const { return tp_; }
  int cp() const { return cp_; }
  int dp() const { return dp_; }
  int pp() const { return pp_; }
  int ep() const { return ep_; }
  uint32_t num_ranks() const { return static_cast<uint32_t>(tp_ * cp_ * dp_ * pp_); }

  RankId rank(const RankCoords& c) const;
  RankCoords coords(RankId rank) const;

  // The members of the group of `rank` along one dimension (ascending rank order).
  std::vector<RankId> tp_group(RankId rank) const;
  std::vector<RankId> cp_group(RankId rank) const;
  std::vector<RankId> dp_group(RankId rank) const;
  std::vector<RankId> pp_group(RankId rank) const;
  // The ranks holding the same parameters as `rank`: its data- and context-parallel peers.
  std::vector<RankId> dp_cp_group(RankId rank) const;
  // The ranks that together hold one copy of the model: the rank's tensor- and pipeline-parallel
  // peers (Megatron's model-parallel group, over which the gradient norm is summed).
  std::vector<RankId> model_parallel_group(RankId rank) const;
  // Expert parallelism: the rank's group, its place in it, and the ranks holding the same
  // experts (over which expert gradients are reduced).
  std::vector<RankId> ep_group(RankId rank) const;
  int ep_index(RankId rank) const;
  std::vector<RankId> expert_dp_group(RankId rank) const;

 private:
  int tp_;
  int cp_;
  int dp_;
  int pp_;
  int ep_;
};

}  // namespace racksim
