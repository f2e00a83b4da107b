// Collectives that follow the topology (NVLS, hierarchical, tree, NVL72 racks, the mixed-NIC
// what-if) against their closed forms on an idle network. One simulation per TEST (process).
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/hardware_presets.h"
#include "topologies/topology_graph.h"
#include "workloads/collectives/collective_sweep.h"

namespace racksim {
namespace {

config::Hardware preset(const std::string& name, int nodes, sim::Algorithm algorithm) {
  config::Hardware hw = *topo::hardware_preset(name);
  hw.set_nodes(nodes);
  hw.mutable_collectives()->set_base_latency_s(0);
  hw.mutable_collectives()->set_algorithm(
      algorithm == sim::Algorithm::kNvls           ? config::CollectiveTuning::NVLS
      : algorithm == sim::Algorithm::kHierarchical ? config::CollectiveTuning::HIERARCHICAL
      : algorithm == sim::Algorithm::kTree         ? config::CollectiveTuning::TREE
      : algorithm == sim::Algorithm::kRing         ? config::CollectiveTuning::RING
                                                   : config::CollectiveTuning::AUTO);
  return hw;
}

// Time from the last rank's arrival to the last rank's completion of one collective of
// `bytes` on ranks placed on `gpus`.
double simulate_one(CollectiveKind kind, double bytes, const config::Hardware& hw,
                    const std::vector<uint32_t>& gpus) {
  const EventGraph graph =
      collective_sweep_graph(kind, static_cast<uint32_t>(gpus.size()), {bytes});
  const topo::Topology topology = topo::build_cluster(hw);
  const auto result = sim::simulate(graph, topology, gpus, sim::ComputeModel::from_hardware(hw),
                                    sim::sim_options(hw, {}));
  double start = 0, end = 0;
  for (const auto& t : result.timing) {
    start = std::max(start, t.start_s);
    end = std::max(end, t.end_s);
  }
  return end - start;
}

std::vector<uint32_t> first_gpus(uint32_t n) {
  std::vector<uint32_t> gpus(n);
  std::iota(gpus.begin(), gpus.end(), 0u);
  return gpus;
}

void expect_within(double actual, double expected, double tolerance) {
  EXPECT_NEAR(actual, expected, tolerance * expected)
      << "actual " << actual * 1e6 << " us, expected " << expected * 1e6 << " us";
}

constexpr double kBytes = 256.0 * (1 << 20);

TEST(TopologyCollectives, NvlsTimeIsTheBufferTimesNPlusOneOverNAtThePortRate) {
  const config::Hardware hw = preset("dgx-h100", 1, sim::Algorithm::kNvls);
  const double n = 8;
  const double port = 450e9 * hw.scale_up().nvls_efficiency();
  const double expected = hw.scale_up().latency_s() + kBytes * (n + 1) / n / port;
  expect_within(simulate_one(CollectiveKind::kAllReduce, kBytes, hw, first_gpus(8)), expected,
                0.01);
  // So busbw = algbw x 2(n-1)/n = 2(n-1)/(n+1) x the port rate: ~480 GB/s on DGX H100.
}

TEST(TopologyCollectives, AutoPicksNvlsInsideAnNvlsDomainAndRingsAcrossDomains) {
  const config::Hardware hw = preset("dgx-h100", 2, sim::Algorithm::kAuto);
  const topo::Topology t = topo::build_cluster(hw);
  EXPECT_EQ(sim::choose_algorithm(CollectiveKind::kAllReduce, sim::Algorithm::kAuto,
                                  sim::comm_shape(t, first_gpus(8))),
            sim::Algorithm::kNvls);
  EXPECT_EQ(sim::choose_algorithm(CollectiveKind::kAllReduce, sim::Algorithm::kAuto,
                                  sim::comm_shape(t, first_gpus(16))),
            sim::Algorithm::kRing);
  EXPECT_EQ(sim::choose_algorithm(CollectiveKind::kAllGather, sim::Algorithm::kNvls,
                                  sim::comm_shape(t, first_gpus(8))),
            sim::Algorithm::kRing);
  const topo::Topology a100 = topo::build_cluster(preset("dgx-a100", 1, sim::Algorithm::kAuto));
  EXPECT_EQ(sim::choose_algorithm(CollectiveKind::kAllReduce, sim::Algorithm::kNvls,
                                  sim::comm_shape(a100, first_gpus(8))),
            sim::Algorithm::kRing);  // no NVLink SHARP on NVSwitch 2
}

TEST(TopologyCollectives, Nvl72RackIsOneDomainForRings) {
  // 72 GPUs over 18 trays: one ring over NVLink, 2(n-1) steps of S/n at the port rate.
  const config::Hardware hw = preset("gb200-nvl72", 18, sim::Algorithm::kRing);
  const topo::Topology t = topo::build_cluster(hw);
  const auto shape = sim::comm_shape(t, first_gpus(72));
  EXPECT_TRUE(shape.single_domain());
  EXPECT_EQ(sim::choose_algorithm(CollectiveKind::kAllReduce, sim::Algorithm::kAuto, shape),
            sim::Algorithm::kNvls);
  const double n = 72;
  const double a = hw.scale_up().latency_s();
  const double bw = hw.scale_up().bytes_per_s() * hw.scale_up().efficiency();
  const double expected = 2 * (n - 1) * (a + kBytes / (n * bw));
  expect_within(simulate_one(CollectiveKind::kAllReduce, kBytes, hw, first_gpus(72)), expected,
                0.01);
}

TEST(TopologyCollectives, HierarchicalIsDomainReduceScatterRailAllReduceDomainAllGather) {
  const config::Hardware hw = preset("dgx-h100", 2, sim::Algorithm::kHierarchical);
  const double local = 8, domains = 2;
  const double a_nvlink = hw.scale_up().latency_s();
  const double nvlink = 450e9 * hw.scale_up().efficiency();
  // GPU -> PCIe switch -> NIC -> leaf, and back: 4 PCIe links and 2 NIC links.
  const double a_net = 4 * hw.pcie().latency_s() + 2 * hw.scale_out().nic_latency_s();
  const double nic = 400e9 / 8 * hw.scale_out().efficiency();
  const double expected = 2 * (local - 1) * (a_nvlink + kBytes / local / nvlink) +
                          2 * (domains - 1) * (a_net + kBytes / (local * domains) / nic);
  expect_within(simulate_one(CollectiveKind::kAllReduce, kBytes, hw, first_gpus(16)), expected,
                0.01);
}

TEST(TopologyCollectives, TreeOfTwoIsTwoPipelinedChainsInOppositeDirections) {
  // Two trees, each a chain of the two GPUs carrying half the buffer in 8 chunks: 9 phases
  // with sends, every GPU link carrying the whole buffer once.
  const config::Hardware hw = preset("dgx-h100", 1, sim::Algorithm::kTree);
  const double a = hw.scale_up().latency_s();
  const double bw = 450e9 * hw.scale_up().efficiency();
  const double expected = 9 * a + kBytes / bw;
  expect_within(simulate_one(CollectiveKind::kAllReduce, kBytes, hw, first_gpus(2)), expected,
                0.01);
}

TEST(TopologyCollectives, TreeAcrossNodesRunsAtNetworkSpeedOverEveryNic) {
  // 4 nodes, 8 channels of two trees each: every GPU heads one channel's chain, so all 8 NICs of
  // a node carry tree traffic. A node sends at least half the buffer up one tree (and the other
  // half down or up the other), so the time is at least S / 2 over its 8 NICs, and the
  // pipelines' fill and the parents' two children keep it within a few times S / 8 NICs.
  const config::Hardware hw = preset("dgx-h100", 4, sim::Algorithm::kTree);
  const double nics = 8 * 400e9 / 8 * hw.scale_out().efficiency();
  const double t = simulate_one(CollectiveKind::kAllReduce, kBytes, hw, first_gpus(32));
  EXPECT_GT(t, kBytes / 2 / nics);
  EXPECT_LT(t, 4 * kBytes / nics);
}

// GPU 3 of two seed nodes: its own port is 100 GbE; NCCL gives it the InfiniBand NIC it shares
// with GPU 2. Treating every port as IB sends it over the Ethernet port instead.
double seed_pair_time(bool treat_all_as_ib) {
  config::Hardware hw = preset("hgx-b300-mixed-nics", 2, sim::Algorithm::kRing);
  hw.mutable_scale_out()->set_treat_all_nics_as_ib(treat_all_as_ib);
  return simulate_one(CollectiveKind::kAllReduce, kBytes, hw, {3, 11});
}

TEST(TopologyCollectives, MisclassifiedNicSlowsAnAllReduceByTheLinkRateRatio_Correct) {
  // Two ranks: 2 steps of S/2 over the pair's NICs.
  const config::Hardware hw = preset("hgx-b300-mixed-nics", 2, sim::Algorithm::kRing);
  const double ib = 400e9 / 8 * hw.scale_out().efficiency();
  const double t = seed_pair_time(false);
  EXPECT_NEAR(t, kBytes / ib, 0.01 * kBytes / ib);
}

TEST(TopologyCollectives, MisclassifiedNicSlowsAnAllReduceByTheLinkRateRatio_WhatIf) {
  const config::Hardware hw = preset("hgx-b300-mixed-nics", 2, sim::Algorithm::kRing);
  const double ib = 400e9 / 8 * hw.scale_out().efficiency();
  const double ethernet = 100e9 / 8 * hw.scale_out().ethernet_efficiency();
  // The what-if is slower by the ratio of the two ports' rates (after efficiency).
  const double t = seed_pair_time(true);
  EXPECT_NEAR(t / (kBytes / ib), ib / ethernet, 0.05 * ib / ethernet);
}

}  // namespace
}  // namespace racksim
