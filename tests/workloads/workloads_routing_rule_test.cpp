// The routing rule without a sample (workloads/moe/routing_rule.h): the probability that a token
// reaches a set of experts against the hypergeometric closed forms, DeepSeek-V3's node-limited
// routing (a node is one group: reached by half the tokens), and the deduplicated dispatch matrix
// it gives against the one a large sample drawn by the same rule gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "workloads/moe/routing_rule.h"
#include "workloads/moe/token_routing.h"

namespace racksim {
namespace {

TEST(RoutingRule, ReachWithoutGroupsIsHypergeometric) {
  // 16 experts, 2 per token; a set of 4: 1 - C(12, 2) / C(16, 2) = 1 - 66 / 120.
  const RoutingRule rule{16, 2, 1, 1};
  EXPECT_NEAR(reach_probability(rule, {4}), 1 - 66.0 / 120.0, 1e-12);
  EXPECT_NEAR(reach_probability(rule, {0}), 0, 1e-12);
  EXPECT_NEAR(reach_probability(rule, {16}), 1, 1e-12);
}

TEST(RoutingRule, DeepSeekNodeLimitedRoutingReachesHalfTheNodes) {
  // 256 experts in 8 groups of 32, 8 per token from 4 groups. A node holding one whole group is
  // reached when its group is chosen: 4 of 8.
  const RoutingRule rule{256, 8, 8, 4};
  std::vector<int64_t> one_group(8, 0);
  one_group[3] = 32;
  EXPECT_NEAR(reach_probability(rule, one_group), 0.5, 1e-12);
  // A GPU of that node holds 4 of the group's experts: its group chosen (1/2), then at least one
  // of its 4 among the 2 the group gives: 1 - C(28, 2) / C(32, 2).
  std::vector<int64_t> four(8, 0);
  four[3] = 4;
  EXPECT_NEAR(reach_probability(rule, four), 0.5 * (1 - 378.0 / 496.0), 1e-12);
  // Two GPUs' experts in two groups: 1 - E[product of the chosen groups' misses], the pair of
  // groups chosen together 3/14 of the time, one of them 8/14, neither 3/14.
  std::vector<int64_t> split(8, 0);
  split[0] = split[5] = 4;
  const double miss = 378.0 / 496.0;
  EXPECT_NEAR(reach_probability(rule, split),
              1 - (3.0 / 14 * miss * miss + 8.0 / 14 * miss + 3.0 / 14), 1e-12);
  // Without the group limit every node would be reached by 1 - C(224, 8) / C(256, 8).
  double unlimited_miss = 1;
  for (int t = 0; t < 8; ++t) unlimited_miss *= (224.0 - t) / (256.0 - t);
  EXPECT_NEAR(reach_probability({256, 8, 1, 1}, {32}), 1 - unlimited_miss, 1e-12);
}

TEST(RoutingRule, DedupMatrixCrossesOncePerReachedNode) {
  // DeepSeek-V3's training layout: EP64 over 8 nodes of 8 GPUs, 4 experts per GPU.
  const RoutingRule rule{256, 8, 8, 4};
  const auto m = rule_dedup_dispatch_matrix(contiguous_placement(256, 64), rule, 8);
  const size_t n = 64;
  ASSERT_EQ(m.size(), n * n);
  // Rank 0 sends to the GPU of its rail on each other node half the time: 0.5 / 8 per copy.
  for (size_t node = 1; node < 8; ++node) EXPECT_NEAR(m[0 * n + node * 8], 0.5 / 8, 1e-12);
  EXPECT_EQ(m[0 * n + 9], 0);  // never to another rail off its node
  // Cross-node bytes per expert copy: 7 x 0.5 / 8 = 0.4375, against 7/8 without deduplication.
  double off_node = 0;
  for (size_t j = 8; j < n; ++j) off_node += m[j];
  EXPECT_NEAR(off_node, 7 * 0.5 / 8, 1e-12);
  // Inside its node rank 0 sends its own tokens and forwards those of rail 0 on the 7 other
  // nodes: 8 senders x P(reach a GPU) / 8 copies.
  std::vector<int64_t> four(8, 0);
  four[0] = 4;
  EXPECT_NEAR(m[0 * n + 1], reach_probability(rule, four), 1e-12);
}

// A sample of `tokens` tokens drawn by the rule (groups uniformly, then as many experts
// uniformly from each), from a fixed seed.
TokenRouting sample_rule(const RoutingRule& rule, int tokens) {
  std::mt19937 rng(7);
  TokenRouting r;
  r.experts = rule.experts;
  const int64_t size = rule.experts / rule.groups;
  std::vector<int> groups(static_cast<size_t>(rule.groups));
  std::iota(groups.begin(), groups.end(), 0);
  for (int t = 0; t < tokens; ++t) {
    std::shuffle(groups.begin(), groups.end(), rng);
    std::vector<int> token;
    for (int64_t g = 0; g < rule.groups_per_token; ++g) {
      std::vector<int> pool;
      for (int64_t e = 0; e < size; ++e) pool.push_back(static_cast<int>(groups[g] * size + e));
      std::shuffle(pool.begin(), pool.end(), rng);
      token.insert(token.end(), pool.begin(), pool.begin() + rule.top_k / rule.groups_per_token);
    }
    r.tokens.push_back(token);
  }
  return r;
}

TEST(RoutingRule, DedupMatrixAgreesWithASampleOfTheRule) {
  // 16 experts in 4 groups, 4 per token from 2 groups, on 8 ranks in 4 domains of 2.
  const RoutingRule rule{16, 4, 4, 2};
  const ExpertPlacementMap map = contiguous_placement(16, 8);
  const auto exact = rule_dedup_dispatch_matrix(map, rule, 2);
  const auto sampled = dedup_dispatch_matrix(map, sample_rule(rule, 40000), 2);
  ASSERT_EQ(exact.size(), sampled.size());
  double largest = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    EXPECT_NEAR(exact[i], sampled[i], 0.01) << "entry " << i;
    largest = std::max(largest, exact[i]);
  }
  EXPECT_GT(largest, 0.1);  // the entries compared are not all tiny
}

}  // namespace
}  // namespace racksim
