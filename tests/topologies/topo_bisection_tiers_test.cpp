// Bisection per tier (scale-up domain, scalable unit, pod, cluster): each tier's formula agrees
// with the max-flow on the graph, on oversubscribed two- and three-tier fabrics, NVL72 racks and
// meshes, and one tier is pinned to a value worked out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_hardware.h"
#include "topologies/bisection_tiers.h"
#include "topologies/hardware_presets.h"

namespace racksim {
namespace {

std::vector<topo::TierBisection> tiers_of(const config::Hardware& hw) {
  const topo::Topology t = topo::build_cluster(hw);
  std::vector<topo::TierBisection> tiers = topo::bisection_per_tier(t.spec);
  topo::add_max_flow(t, tiers);
  return tiers;
}

std::vector<std::string> names(const std::vector<topo::TierBisection>& tiers) {
  std::vector<std::string> out;
  for (const auto& t : tiers) out.push_back(t.tier);
  return out;
}

void expect_formula_equals_max_flow(const std::vector<topo::TierBisection>& tiers) {
  for (const auto& t : tiers) {
    EXPECT_GT(t.formula_bytes_per_s, 0) << t.tier;
    EXPECT_NEAR(t.max_flow_bytes_per_s / t.formula_bytes_per_s, 1, 1e-9) << t.tier;
  }
}

TEST(TopoBisectionTiers, TwoTierOversubscribedFabricAgreesWithMaxFlow) {
  // 64 nodes in 2 units of 32, leaves 3:1: halves of a unit get the NICs, halves of the
  // cluster a third of them.
  const auto tiers = tiers_of(testing::test_hardware(64, "scale_out { oversubscription: 3 }"));
  ASSERT_EQ(names(tiers),
            (std::vector<std::string>{"scale-up domain", "scalable unit", "cluster"}));
  EXPECT_EQ(tiers[1].gpus, 256);
  EXPECT_EQ(tiers[2].gpus, 512);
  EXPECT_NEAR(tiers[1].formula_bytes_per_s, 16 * 8 * testing::kTestNic, 1);
  EXPECT_NEAR(tiers[2].formula_bytes_per_s, 32 * 8 * testing::kTestNic / 3, 1);
  expect_formula_equals_max_flow(tiers);
}

TEST(TopoBisectionTiers, ThreeTierFabricAgreesWithMaxFlowAndByHand) {
  // Units of 4 nodes, pods of 2 units with leaves 2:1, 4 pods under cores at 7:1.
  const auto tiers = tiers_of(testing::test_hardware(
      32,
      "scale_out { nodes_per_leaf: 4 oversubscription: 2 tiers: 3 units_per_pod: 2 spines: 4 "
      "cores: 4 pod_oversubscription: 7 }"));
  ASSERT_EQ(names(tiers),
            (std::vector<std::string>{"scale-up domain", "scalable unit", "pod", "cluster"}));
  EXPECT_EQ(tiers[2].gpus, 64);
  EXPECT_EQ(tiers[3].gpus, 256);
  // By hand: NVLink 450 GB/s x 0.8 = 360 GB/s per GPU, 4 GPUs a side: 1,440 GB/s. A pod's
  // halves are its two units: 4 nodes x 8 NICs x 45 GB/s (400 Gb/s x 0.9), halved by the 2:1
  // leaves: 720 GB/s.
  EXPECT_NEAR(tiers[0].formula_bytes_per_s, 1440e9, 1);
  EXPECT_NEAR(tiers[2].formula_bytes_per_s, 720e9, 1);
  EXPECT_NEAR(tiers[3].formula_bytes_per_s, 16 * 8 * 45e9 / 14, 1);
  expect_formula_equals_max_flow(tiers);
}

TEST(TopoBisectionTiers, OneUnitClusterHasNoSeparateClusterTier) {
  const auto tiers = tiers_of(testing::test_hardware(4));
  ASSERT_EQ(names(tiers), (std::vector<std::string>{"scale-up domain", "scalable unit"}));
  EXPECT_EQ(tiers[1].gpus, 32);
  expect_formula_equals_max_flow(tiers);
}

TEST(TopoBisectionTiers, RackDomainsAndMeshesAgreeWithMaxFlow) {
  // An NVL72 domain spans 18 trays: its halves meet in the rack's NVLink switch.
  const auto rack = tiers_of(*topo::hardware_preset("gb200-nvl72"));
  ASSERT_FALSE(rack.empty());
  EXPECT_EQ(rack[0].gpus, 72);
  expect_formula_equals_max_flow(rack);
  // A mesh: each GPU reaches the other half over 4 pairwise links, below its port block.
  const auto mesh = tiers_of(*topo::hardware_preset("mi300x"));
  ASSERT_FALSE(mesh.empty());
  EXPECT_EQ(mesh[0].tier, "scale-up domain");
  expect_formula_equals_max_flow(mesh);
}

}  // namespace
}  // namespace racksim
