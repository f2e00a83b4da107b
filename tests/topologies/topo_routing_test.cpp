// Routes, and their bandwidth and latency by algebra: the sum of the links' latencies and the
// narrowest link (no simulation).
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/test_hardware.h"
#include "topologies/hardware_presets.h"
#include "topologies/routing.h"
#include "topologies/topology_graph.h"

namespace racksim::topo {
namespace {

constexpr double kNvlink = testing::kTestNvlink;
constexpr double kNic = testing::kTestNic;
constexpr double kPcie = testing::kTestPcie;
// Test hardware latencies: NVLink 1 us per side, PCIe 0.75 us per link, NIC link 1 us,
// switch link 0.5 us, inter-socket 0.25 us.
constexpr double kNvlinkHop = 2e-6;
constexpr double kGpuToNic = 2 * 0.75e-6;
constexpr double kNicLink = 1e-6;
constexpr double kSwitchLink = 0.5e-6;

config::Hardware hardware(int nodes, const std::string& extra = "") {
  return testing::test_hardware(nodes, extra);
}

VertexId gpu(const Topology& t, int node, int index) {
  return t.gpus[node * t.gpus_per_node + index];
}

// The vertices a route visits, from its source to its destination.
std::vector<VertexId> path(const Topology& t, VertexId src, const std::vector<Hop>& hops) {
  std::vector<VertexId> vertices{src};
  for (const Hop& hop : hops) {
    const EdgeId e = t.edges[hop.edge];
    const VertexId from = hop.forward ? boost::source(e, t.graph) : boost::target(e, t.graph);
    EXPECT_EQ(from, vertices.back()) << "hops do not chain";
    vertices.push_back(hop.forward ? boost::target(e, t.graph) : boost::source(e, t.graph));
  }
  return vertices;
}

std::vector<std::string> names(const Topology& t, VertexId src, const std::vector<Hop>& hops) {
  std::vector<std::string> out;
  for (VertexId v : path(t, src, hops)) out.push_back(t.graph[v].name);
  return out;
}

TEST(TopoRouting, SameNodeGoesThroughTheNvSwitch) {
  const Topology t = build_cluster(hardware(2));
  Router router(t);
  const auto& hops = router.route(gpu(t, 0, 2), gpu(t, 0, 5));
  EXPECT_EQ(names(t, gpu(t, 0, 2), hops),
            (std::vector<std::string>{"n0.gpu2", "n0.nvswitch", "n0.gpu5"}));
  EXPECT_TRUE(hops[0].forward);
  EXPECT_FALSE(hops[1].forward);
  EXPECT_DOUBLE_EQ(router.latency_s(hops), kNvlinkHop);
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(hops), kNvlink);
}

TEST(TopoRouting, SameRailCrossesOneLeaf) {
  const Topology t = build_cluster(hardware(2));
  Router router(t);
  const auto& hops = router.route(gpu(t, 0, 3), gpu(t, 1, 3));
  EXPECT_EQ(names(t, gpu(t, 0, 3), hops),
            (std::vector<std::string>{"n0.gpu3", "n0.pcie1", "n0.nic3", "su0.rail3.leaf", "n1.nic3",
                                      "n1.pcie1", "n1.gpu3"}));
  EXPECT_DOUBLE_EQ(router.latency_s(hops), 2 * kGpuToNic + 2 * kNicLink);
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(hops), kNic);
}

TEST(TopoRouting, CrossRailGoesThroughASpine) {
  const Topology t = build_cluster(hardware(2));
  Router router(t);
  const auto& hops = router.route(gpu(t, 0, 0), gpu(t, 1, 1));
  const auto vertices = path(t, gpu(t, 0, 0), hops);
  ASSERT_EQ(vertices.size(), 9u);
  EXPECT_EQ(t.graph[vertices[2]].name, "n0.nic0");
  EXPECT_EQ(t.graph[vertices[3]].name, "su0.rail0.leaf");
  EXPECT_EQ(t.graph[vertices[4]].kind, VertexKind::kSpine);
  EXPECT_EQ(t.graph[vertices[5]].name, "su0.rail1.leaf");
  EXPECT_EQ(t.graph[vertices[6]].name, "n1.nic1");
  EXPECT_DOUBLE_EQ(router.latency_s(hops), 2 * kGpuToNic + 2 * kNicLink + 2 * kSwitchLink);
  // The leaf uplinks (32 servers' worth over 8 spines) are wider than the NIC.
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(hops), kNic);
}

TEST(TopoRouting, CrossRailWithPxnMovesToTheDestinationRailOverNvlink) {
  const Topology t = build_cluster(hardware(2, "collectives { pxn: true }"));
  Router router(t);
  const auto& hops = router.route(gpu(t, 0, 0), gpu(t, 1, 1));
  EXPECT_EQ(names(t, gpu(t, 0, 0), hops),
            (std::vector<std::string>{"n0.gpu0", "n0.nvswitch", "n0.gpu1", "n0.pcie0", "n0.nic1",
                                      "su0.rail1.leaf", "n1.nic1", "n1.pcie0", "n1.gpu1"}));
  EXPECT_DOUBLE_EQ(router.latency_s(hops), kNvlinkHop + 2 * kGpuToNic + 2 * kNicLink);
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(hops), kNic);
  // Same-rail traffic is unchanged by PXN.
  EXPECT_EQ(router.route(gpu(t, 0, 3), gpu(t, 1, 3)).size(), 6u);
}

TEST(TopoRouting, CopiesCrossTheInterSocketLinkOnlyForTheOtherSocket) {
  const Topology t = build_cluster(hardware(1));
  Router router(t);
  const auto& own = router.route(gpu(t, 0, 1), t.cpus[0]);
  EXPECT_EQ(names(t, gpu(t, 0, 1), own),
            (std::vector<std::string>{"n0.gpu1", "n0.pcie0", "n0.cpu0"}));
  EXPECT_DOUBLE_EQ(router.latency_s(own), 2 * 0.75e-6);
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(own), kPcie);
  const auto& other = router.route(t.cpus[1], gpu(t, 0, 1));
  EXPECT_EQ(names(t, t.cpus[1], other),
            (std::vector<std::string>{"n0.cpu1", "n0.cpu0", "n0.pcie0", "n0.gpu1"}));
  EXPECT_DOUBLE_EQ(router.latency_s(other), 0.25e-6 + 2 * 0.75e-6);
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(other), kPcie);
}

TEST(TopoRouting, CopiesStayInsideTheServer) {
  const Topology t = build_cluster(hardware(2));
  Router router(t);
  EXPECT_THROW(router.route(gpu(t, 0, 0), t.cpus[2]), std::runtime_error);
}

TEST(TopoRouting, NvlRackTraysTalkOverNvlinkAndCopiesUseC2c) {
  const Topology t = build_cluster(*hardware_preset("gb200-nvl72"));
  Router router(t);
  const auto& hops = router.route(gpu(t, 0, 0), gpu(t, 17, 3));
  EXPECT_EQ(names(t, gpu(t, 0, 0), hops),
            (std::vector<std::string>{"n0.gpu0", "nvl0.switch", "n17.gpu3"}));
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(hops), 900e9 * 0.82);
  const auto& copy = router.route(gpu(t, 0, 3), t.cpus[1]);
  EXPECT_EQ(names(t, gpu(t, 0, 3), copy), (std::vector<std::string>{"n0.gpu3", "n0.cpu1"}));
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(copy), 450e9 * 0.85);
}

TEST(TopoRouting, TwoNvlRacksTalkOverTheirNics) {
  config::Hardware hw = *hardware_preset("gb200-nvl72");
  hw.set_nodes(36);
  const Topology t = build_cluster(hw);
  Router router(t);
  const auto& hops = router.route(gpu(t, 0, 1), gpu(t, 18, 1));
  EXPECT_EQ(names(t, gpu(t, 0, 1), hops),
            (std::vector<std::string>{"n0.gpu1", "n0.cpu0", "n0.nic1", "su0.rail1.leaf", "n18.nic1",
                                      "n18.cpu0", "n18.gpu1"}));
}

TEST(TopoRouting, MeshPairsShareOneLink) {
  const Topology t = build_cluster(*hardware_preset("mi300x"));
  Router router(t);
  const auto& hops = router.route(gpu(t, 0, 0), gpu(t, 0, 5));
  EXPECT_EQ(names(t, gpu(t, 0, 0), hops),
            (std::vector<std::string>{"n0.gpu0", "n0.gpu0.xgmi", "n0.gpu5.xgmi", "n0.gpu5"}));
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(hops), 64e9 * 0.745);
}

TEST(TopoRouting, EthernetSendersReachAnEthernetPortOfTheReceiver) {
  config::Hardware hw = *hardware_preset("hgx-b300-mixed-nics");
  hw.mutable_scale_out()->set_treat_all_nics_as_ib(true);
  const Topology t = build_cluster(hw);
  Router router(t);
  // GPU 3 sends on its Ethernet port; GPU 2 of node 1 receives on the Ethernet port nearest it.
  const auto& hops = router.route(gpu(t, 0, 3), gpu(t, 1, 2));
  EXPECT_EQ(names(t, gpu(t, 0, 3), hops),
            (std::vector<std::string>{"n0.gpu3", "n0.pcie1", "n0.nic3", "su0.eth.leaf", "n1.nic3",
                                      "n1.pcie1", "n1.gpu2"}));
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(hops), 100e9 / 8 * 0.85);
}

TEST(TopoRouting, NoGpuIsEverATransitWithoutPxn) {
  const Topology t = build_cluster(hardware(40));
  Router router(t);
  for (uint32_t src = 0; src < t.num_gpus(); src += 7) {
    for (uint32_t dst = 0; dst < t.num_gpus(); dst += 13) {
      if (src == dst) continue;
      const auto vertices = path(t, t.gpus[src], router.route(t.gpus[src], t.gpus[dst]));
      for (size_t i = 1; i + 1 < vertices.size(); ++i) {
        EXPECT_NE(t.graph[vertices[i]].kind, VertexKind::kGpu) << src << " -> " << dst;
        EXPECT_NE(t.graph[vertices[i]].kind, VertexKind::kCpu) << src << " -> " << dst;
      }
      EXPECT_EQ(vertices.back(), t.gpus[dst]);
    }
  }
}

TEST(TopoRouting, AcrossUnitsOnTheSameRailGoesThroughASpine) {
  const Topology t = build_cluster(hardware(40));
  Router router(t);
  const auto vertices = path(t, gpu(t, 0, 4), router.route(gpu(t, 0, 4), gpu(t, 39, 4)));
  ASSERT_EQ(vertices.size(), 9u);
  EXPECT_EQ(t.graph[vertices[3]].name, "su0.rail4.leaf");
  EXPECT_EQ(t.graph[vertices[4]].kind, VertexKind::kSpine);
  EXPECT_EQ(t.graph[vertices[5]].name, "su1.rail4.leaf");
}

TEST(TopoRouting, ThreeTiersCrossACoreBetweenPods) {
  const Topology t =
      build_cluster(hardware(128, "scale_out { tiers: 3 units_per_pod: 2 spines: 4 cores: 2 }"));
  Router router(t);
  const auto in_pod = path(t, gpu(t, 0, 4), router.route(gpu(t, 0, 4), gpu(t, 40, 4)));
  EXPECT_EQ(in_pod.size(), 9u);  // leaf, pod spine, leaf
  const auto across = path(t, gpu(t, 0, 4), router.route(gpu(t, 0, 4), gpu(t, 100, 4)));
  ASSERT_EQ(across.size(), 11u);
  EXPECT_EQ(t.graph[across[5]].kind, VertexKind::kCore);
}

TEST(TopoRouting, EcmpIsDeterministicAndSpreads) {
  const Topology t = build_cluster(hardware(40));
  Router router(t);
  Router other(t);
  std::map<std::string, int> spine_use;
  for (int node = 0; node < 32; ++node) {
    for (int g = 0; g < 8; ++g) {
      const VertexId src = gpu(t, node, g);
      const VertexId dst = gpu(t, (node + 1) % 40, (g + 1) % 8);
      const std::vector<Hop> first = router.route(src, dst);
      EXPECT_EQ(names(t, src, first), names(t, src, other.route(src, dst)));
      ++spine_use[t.graph[path(t, src, first)[4]].name];
    }
  }
  // 256 pairs over 8 spines: every spine carries some, none carries most.
  EXPECT_EQ(spine_use.size(), 8u);
  for (const auto& [spine, pairs] : spine_use) EXPECT_LT(pairs, 64) << spine;
}

TEST(TopoRouting, RoutesAreIndependentOfQueryOrderAndUseEveryNic) {
  // Two NICs per GPU: the pair picks one of them.
  const Topology t = build_cluster(hardware(40, "scale_out { nics_per_gpu: 2 }"));
  std::vector<std::pair<VertexId, VertexId>> pairs;
  for (uint32_t src = 0; src < t.num_gpus(); src += 11) {
    for (uint32_t dst = 3; dst < t.num_gpus(); dst += 17) {
      if (t.node_of_gpu(src) != t.node_of_gpu(dst)) pairs.emplace_back(t.gpus[src], t.gpus[dst]);
    }
  }
  Router forward(t);
  Router backward(t);  // same pairs asked in reverse order: different partial searches cached
  std::vector<std::vector<Hop>> routes;
  for (const auto& [src, dst] : pairs) routes.push_back(forward.route(src, dst));
  std::set<std::string> first_nics;
  for (size_t i = pairs.size(); i-- > 0;) {
    const auto& [src, dst] = pairs[i];
    const auto& hops = backward.route(src, dst);
    ASSERT_EQ(hops.size(), routes[i].size());
    for (size_t h = 0; h < hops.size(); ++h) {
      EXPECT_EQ(hops[h].edge, routes[i][h].edge);
      EXPECT_EQ(hops[h].forward, routes[i][h].forward);
    }
    const auto vertices = path(t, src, hops);
    EXPECT_EQ(vertices.back(), dst);
    const std::string& nic = t.graph[vertices[2]].name;
    first_nics.insert(nic.substr(nic.size() - 2));
  }
  EXPECT_EQ(first_nics, (std::set<std::string>{".0", ".1"}));  // both NICs of a GPU get used
}

TEST(TopoRouting, SelfRouteIsEmpty) {
  const Topology t = build_cluster(hardware(2));
  Router router(t);
  EXPECT_TRUE(router.route(t.gpus[0], t.gpus[0]).empty());
}

}  // namespace
}  // namespace racksim::topo
