// Where a token's copies go under a routing rule with a balanced load, without a routing
// sample: every expert is equally likely; a token chooses top_k distinct experts, from its best
// groups_per_token of `groups` equal groups of consecutive experts when the model limits the
// groups (DeepSeek-V3's node-limited routing: 256 experts in 8 groups, a token to at most 4).
// "Balanced" reads as: the groups a token reaches are a uniformly random groups_per_token of
// them, and each gives it top_k / groups_per_token uniformly random experts of its own. That is
// DeepSeek-V3's rule with equal affinities: a group ranks by the sum of its best top_k /
// groups_per_token scores, so each chosen group holds that many of the token's experts. Without
// groups: a uniformly random top_k of all experts.
//
// It answers what a node-deduplicated dispatch sends (expert_placement.node_dedup_dispatch)
// when no sample of routing decisions is given: the probability that a token reaches a rank
// (one copy however many of its experts sit there) and a domain (one copy over the network).
#pragma once

#include <cstdint>
#include <vector>

#include "proto/scenario.pb.h"
#include "workloads/moe/expert_placement.h"

namespace racksim {

struct RoutingRule {
  int64_t experts = 0;
  int64_t top_k = 0;
  int64_t groups = 1;
  int64_t groups_per_token = 1;
};

// The model's rule (model.num_experts, experts_per_token, moe_expert_groups,
// moe_groups_per_token; one group when unset).
RoutingRule routing_rule(const config::Model& model);

// The probability that a token chooses at least one expert of a set, given how many of the
// set's experts each group holds (`in_group`, one entry per group).
double reach_probability(const RoutingRule& rule, const std::vector<int64_t>& in_group);

// The GPU that lands a token sent from rail `rail` (the sender's index in its domain) to
// `domain`: the same rail there; a partial last domain wraps the rails around so that no GPU of
// it lands the copies of several rails.
int landing_rank(int ranks, int ranks_per_domain, int domain, int rail);

// The domain-deduplicated dispatch under the rule, as dedup_dispatch_matrix gives it from a
// sample (workloads/moe/token_routing.h): an EP x EP row-major matrix whose entry [i][j] is the
// bytes rank i sends rank j per byte of its one-copy-per-expert dispatch. A token crosses once
// to each other domain it reaches, landing on the sender's rail, which forwards it over NVLink
// to the ranks it reaches there; ranks in the sender's domain get it directly. `map` must hold
// each expert on one rank (no replicas).
std::vector<double> rule_dedup_dispatch_matrix(const ExpertPlacementMap& map,
                                               const RoutingRule& rule, int ranks_per_domain);

}  // namespace racksim
