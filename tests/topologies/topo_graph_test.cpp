// The cluster graph: what the node, rack and fabric builders make, and which NICs the GPUs get
// (no simulation).
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/test_hardware.h"
#include "topologies/hardware_presets.h"
#include "topologies/topology_graph.h"

namespace racksim::topo {
namespace {

constexpr double kNvlink = testing::kTestNvlink;
constexpr double kNic = testing::kTestNic;
constexpr double kPcie = testing::kTestPcie;

config::Hardware hardware(int nodes, const std::string& extra = "") {
  return testing::test_hardware(nodes, extra);
}

config::Hardware preset(const std::string& name, int nodes = 0) {
  config::Hardware hw = *hardware_preset(name);
  if (nodes > 0) hw.set_nodes(nodes);
  return hw;
}

int count(const Topology& t, VertexKind kind) {
  int n = 0;
  for (auto [it, end] = boost::vertices(t.graph); it != end; ++it) n += t.graph[*it].kind == kind;
  return n;
}

std::string name(const Topology& t, VertexId v) {
  return t.graph[v].name;
}

// Names of the NICs NCCL would give each GPU of node 0.
std::vector<std::string> nics_of_node0(const Topology& t) {
  std::vector<std::string> out;
  for (int g = 0; g < t.gpus_per_node; ++g) {
    std::string names;
    for (VertexId nic : t.attachment[g].nics) names += (names.empty() ? "" : "+") + name(t, nic);
    out.push_back(names);
  }
  return out;
}

TEST(TopoGraph, OneDgxLikeNodeHasSocketsPcieSwitchesAndNics) {
  const Topology t = build_cluster(hardware(1));
  EXPECT_EQ(count(t, VertexKind::kGpu), 8);
  EXPECT_EQ(count(t, VertexKind::kNvSwitch), 1);
  EXPECT_EQ(count(t, VertexKind::kCpu), 2);
  EXPECT_EQ(count(t, VertexKind::kPcieSwitch), 4);
  EXPECT_EQ(count(t, VertexKind::kNic), 8);
  EXPECT_EQ(count(t, VertexKind::kLeaf), 0);  // no scale-out network for a single node
  // 8 NVLink + 1 inter-socket + 4 switch uplinks + 8 GPU and 8 NIC PCIe links.
  EXPECT_EQ(boost::num_edges(t.graph), 29u);
  ASSERT_EQ(t.num_gpus(), 8u);
  EXPECT_EQ(name(t, t.gpus[3]), "n0.gpu3");
  EXPECT_EQ(t.graph[t.gpus[3]].socket, 0);
  EXPECT_EQ(t.graph[t.gpus[4]].socket, 1);
  EXPECT_EQ(t.attachment[5].numa_node, 1);
  ASSERT_EQ(t.cpus.size(), 2u);
  EXPECT_EQ(name(t, t.cpus[1]), "n0.cpu1");
}

TEST(TopoGraph, GpuKUsesNicKOnItsOwnPcieSwitch) {
  const Topology t = build_cluster(hardware(2));
  EXPECT_EQ(nics_of_node0(t),
            (std::vector<std::string>{"n0.nic0", "n0.nic1", "n0.nic2", "n0.nic3", "n0.nic4",
                                      "n0.nic5", "n0.nic6", "n0.nic7"}));
  // The second node's GPUs take their own node's NICs.
  EXPECT_EQ(name(t, t.attachment[13].nics.at(0)), "n1.nic5");
  // Nearest first: the NIC on the same switch, then the same socket, then the other socket.
  const auto& order = t.attachment[0].nic_order;
  ASSERT_EQ(order.size(), 8u);
  EXPECT_EQ(t.graph[order[1]].name, "n0.nic1");
  EXPECT_EQ(t.graph[order[2]].socket, 0);
  EXPECT_EQ(t.graph[order[4]].socket, 1);
}

TEST(TopoGraph, TwoNodesShareOneUnitWithSpines) {
  const Topology t = build_cluster(hardware(2));
  EXPECT_EQ(count(t, VertexKind::kGpu), 16);
  EXPECT_EQ(count(t, VertexKind::kNvSwitch), 2);
  EXPECT_EQ(count(t, VertexKind::kNic), 16);
  EXPECT_EQ(count(t, VertexKind::kLeaf), 8);   // one unit, 8 rails
  EXPECT_EQ(count(t, VertexKind::kSpine), 8);  // more than one leaf
  EXPECT_EQ(boost::num_vertices(t.graph), 2u * 23 + 16);
  EXPECT_EQ(boost::num_edges(t.graph), 2u * 29 + 16 + 8 * 8);
  EXPECT_EQ(t.node_of_gpu(9), 1);
  EXPECT_EQ(t.scale_up_domain_of_gpu(9), 1);
  EXPECT_EQ(name(t, t.gpus[9]), "n1.gpu1");
}

TEST(TopoGraph, FortyNodesMakeTwoUnits) {
  const Topology t = build_cluster(hardware(40));
  EXPECT_EQ(count(t, VertexKind::kGpu), 320);
  EXPECT_EQ(count(t, VertexKind::kLeaf), 16);
  EXPECT_EQ(count(t, VertexKind::kSpine), 8);
  EXPECT_EQ(boost::num_vertices(t.graph), 40u * 23 + 16 + 8);
  EXPECT_EQ(boost::num_edges(t.graph), 40u * 29 + 320 + 16 * 8);
  ASSERT_EQ(t.edges.size(), boost::num_edges(t.graph));
  for (uint32_t i = 0; i < t.edges.size(); ++i) EXPECT_EQ(t.graph[t.edges[i]].index, i);
}

TEST(TopoGraph, EdgesCarryEfficiencyAndLatencyPerClass) {
  const Topology t = build_cluster(hardware(40));
  std::set<double> uplinks;
  std::map<LinkClass, int> seen;
  for (EdgeId e : t.edges) {
    const Edge& edge = t.graph[e];
    const VertexKind from = t.graph[boost::source(e, t.graph)].kind;
    ++seen[edge.link_class];
    switch (edge.link_class) {
      case LinkClass::kNvlink:
        EXPECT_EQ(from, VertexKind::kGpu);
        EXPECT_DOUBLE_EQ(edge.bytes_per_s, kNvlink);
        EXPECT_DOUBLE_EQ(edge.latency_s, 1e-6);
        break;
      case LinkClass::kPcie:
        EXPECT_TRUE(from == VertexKind::kGpu || from == VertexKind::kPcieSwitch);
        EXPECT_DOUBLE_EQ(edge.bytes_per_s, kPcie);
        EXPECT_DOUBLE_EQ(edge.latency_s, 0.75e-6);
        break;
      case LinkClass::kInterSocket:
        EXPECT_EQ(from, VertexKind::kCpu);
        EXPECT_DOUBLE_EQ(edge.bytes_per_s, testing::kTestInterSocket);
        break;
      case LinkClass::kInfiniband:
        EXPECT_EQ(from, VertexKind::kNic);
        EXPECT_DOUBLE_EQ(edge.bytes_per_s, kNic);
        EXPECT_DOUBLE_EQ(edge.latency_s, 1e-6);
        break;
      case LinkClass::kFabric:
        EXPECT_EQ(from, VertexKind::kLeaf);
        EXPECT_DOUBLE_EQ(edge.latency_s, 0.5e-6);
        uplinks.insert(edge.bytes_per_s);
        break;
      default:
        ADD_FAILURE() << "unexpected link class " << to_string(edge.link_class);
    }
  }
  EXPECT_EQ(seen[LinkClass::kInterSocket], 40);
  // Every leaf has ports for a full unit of 32 servers (unit 1 holds only 8), split over 8 spines.
  EXPECT_EQ(uplinks, (std::set<double>{32 * kNic / 8}));
}

TEST(TopoGraph, OversubscriptionDividesUplinks) {
  const Topology t = build_cluster(hardware(4, "scale_out { oversubscription: 2 spines: 4 }"));
  for (EdgeId e : t.edges) {
    if (t.graph[e].link_class == LinkClass::kFabric) {
      EXPECT_DOUBLE_EQ(t.graph[e].bytes_per_s, 32 * kNic / (4 * 2));
    }
  }
}

TEST(TopoGraph, SeveralNicsPerGpuMakeMoreRails) {
  const Topology t = build_cluster(hardware(2, "scale_out { nics_per_gpu: 2 }"));
  EXPECT_EQ(count(t, VertexKind::kNic), 32);
  EXPECT_EQ(count(t, VertexKind::kLeaf), 16);
  std::set<std::string> all;
  for (auto [it, end] = boost::vertices(t.graph); it != end; ++it) all.insert(t.graph[*it].name);
  EXPECT_EQ(all.size(), boost::num_vertices(t.graph)) << "vertex names must be unique";
  EXPECT_TRUE(all.contains("n0.nic3.1"));
  EXPECT_TRUE(all.contains("su0.rail15.leaf"));
  EXPECT_TRUE(all.contains("spine7"));
  EXPECT_EQ(nics_of_node0(t)[3], "n0.nic3.0+n0.nic3.1");
}

TEST(TopoGraph, ThreeTiersMakePodsWithTheirOwnSpinesAndCores) {
  // 2 units per pod, 5 units -> 3 pods; 4 spines per pod, 6 cores.
  const Topology t = build_cluster(hardware(
      160, "scale_out { tiers: 3 units_per_pod: 2 spines: 4 cores: 6 pod_oversubscription: 7 }"));
  EXPECT_EQ(count(t, VertexKind::kLeaf), 5 * 8);
  EXPECT_EQ(count(t, VertexKind::kSpine), 3 * 4);
  EXPECT_EQ(count(t, VertexKind::kCore), 6);
  const double leaf_spine = 32 * kNic / 4;
  const double spine_core = 2 * 8 * leaf_spine / (6 * 7.0);
  std::map<std::pair<VertexKind, VertexKind>, std::set<double>> rates;
  for (EdgeId e : t.edges) {
    if (t.graph[e].link_class != LinkClass::kFabric) continue;
    rates[{t.graph[boost::source(e, t.graph)].kind, t.graph[boost::target(e, t.graph)].kind}]
        .insert(t.graph[e].bytes_per_s);
  }
  const std::set<double> leaf_rates = rates[{VertexKind::kLeaf, VertexKind::kSpine}];
  const std::set<double> spine_rates = rates[{VertexKind::kSpine, VertexKind::kCore}];
  EXPECT_EQ(leaf_rates, (std::set<double>{leaf_spine}));
  EXPECT_EQ(spine_rates, (std::set<double>{spine_core}));
  // A pod's leaves link only to that pod's 4 spines; every spine links to every core.
  int leaf_spine_edges = 0, spine_core_edges = 0;
  for (EdgeId e : t.edges) {
    const VertexKind to = t.graph[boost::target(e, t.graph)].kind;
    leaf_spine_edges += to == VertexKind::kSpine;
    spine_core_edges += to == VertexKind::kCore;
  }
  EXPECT_EQ(leaf_spine_edges, 40 * 4);
  EXPECT_EQ(spine_core_edges, 12 * 6);
}

TEST(TopoGraph, NvlRackIsOneScaleUpDomainOfTrays) {
  const Topology t = build_cluster(preset("gb200-nvl72"));
  EXPECT_EQ(t.num_gpus(), 72u);
  EXPECT_EQ(t.gpus_per_node, 4);
  EXPECT_EQ(count(t, VertexKind::kNvSwitch), 1);  // the rack's NVLink switch trays
  EXPECT_EQ(count(t, VertexKind::kCpu), 36);      // 2 Grace per tray
  EXPECT_EQ(count(t, VertexKind::kPcieSwitch), 0);
  EXPECT_EQ(count(t, VertexKind::kNic), 72);
  EXPECT_EQ(t.scale_up_domain_of_gpu(71), 0);
  EXPECT_EQ(t.index_in_domain(71), 71);
  EXPECT_EQ(t.node_of_gpu(71), 17);
  // GPU 2 of tray 5 hangs off Grace 1 over C2C, and its NIC off that Grace's PCIe.
  const uint32_t gpu = 5 * 4 + 2;
  EXPECT_EQ(name(t, t.cpus[t.attachment[gpu].numa_node]), "n5.cpu1");
  EXPECT_EQ(name(t, t.attachment[gpu].nics.at(0)), "n5.nic2");
  int c2c = 0;
  for (EdgeId e : t.edges) c2c += t.graph[e].link_class == LinkClass::kC2c;
  EXPECT_EQ(c2c, 72);
}

TEST(TopoGraph, ScaleUpDomainSizeGroupsNodes) {
  // HGX nodes in 32-GPU NVLink domains (a rack-size study): 4 nodes share a switch.
  const Topology t = build_cluster(hardware(8, "scale_up { domain_size: 32 }"));
  EXPECT_EQ(count(t, VertexKind::kNvSwitch), 2);
  EXPECT_EQ(t.scale_up_domain_of_gpu(31), 0);
  EXPECT_EQ(t.scale_up_domain_of_gpu(32), 1);
  EXPECT_EQ(t.index_in_domain(33), 1);
  EXPECT_EQ(t.attachment[0].scale_up, t.attachment[31].scale_up);
}

TEST(TopoGraph, Mi300xIsAFullMeshWithoutASwitch) {
  const Topology t = build_cluster(preset("mi300x"));
  EXPECT_EQ(count(t, VertexKind::kNvSwitch), 0);
  EXPECT_EQ(count(t, VertexKind::kMeshPort), 8);
  int pairwise = 0;
  for (EdgeId e : t.edges) {
    const Edge& edge = t.graph[e];
    if (t.graph[boost::source(e, t.graph)].kind == VertexKind::kMeshPort) {
      ++pairwise;
      EXPECT_DOUBLE_EQ(edge.bytes_per_s, 64e9 * 0.745);
    }
  }
  EXPECT_EQ(pairwise, 8 * 7 / 2);
}

TEST(TopoGraph, GpusWhoseOwnPortIsEthernetTakeTheNearestInfinibandNic) {
  const Topology t = build_cluster(preset("hgx-b300-mixed-nics"));
  const auto nics = nics_of_node0(t);
  EXPECT_EQ(nics[2], "n0.nic2");
  EXPECT_EQ(nics[3], "n0.nic2");  // nic3 is Ethernet: the IB NIC on the same switch
  EXPECT_EQ(nics[7], "n0.nic6");
  EXPECT_EQ(count(t, VertexKind::kLeaf), 6 + 1);  // 6 IB rails and one Ethernet leaf
  // Its own port is as near as nic2 (same switch), but Ethernet.
  EXPECT_EQ(t.graph[t.attachment[3].nic_order.at(1)].name, "n0.nic3");
  EXPECT_EQ(t.graph[t.attachment[3].nic_order.at(1)].link_layer, LinkLayer::kEthernet);
}

TEST(TopoGraph, TreatingAllNicsAsInfinibandGivesGpusTheirEthernetPort) {
  config::Hardware hw = preset("hgx-b300-mixed-nics");
  hw.mutable_scale_out()->set_treat_all_nics_as_ib(true);
  const auto nics = nics_of_node0(build_cluster(hw));
  EXPECT_EQ(nics[3], "n0.nic3");
  EXPECT_EQ(nics[7], "n0.nic7");
}

TEST(TopoGraph, RejectsNonsense) {
  EXPECT_THROW(build_cluster(hardware(0)), std::invalid_argument);
  EXPECT_THROW(build_cluster(hardware(2, "gpus_per_node: 0")), std::invalid_argument);
  EXPECT_THROW(build_cluster(hardware(1, "scale_up { bytes_per_s: 0 }")), std::invalid_argument);
  EXPECT_THROW(build_cluster(hardware(2, "scale_out { nic_bits_per_s: 0 }")),
               std::invalid_argument);
  EXPECT_THROW(build_cluster(hardware(2, "pcie { bytes_per_s: 0 }")), std::invalid_argument);
  EXPECT_THROW(build_cluster(hardware(2, "scale_out { spines: 0 }")), std::invalid_argument);
  EXPECT_THROW(build_cluster(hardware(2, "scale_up { efficiency: 1.5 }")), std::invalid_argument);
  EXPECT_THROW(build_cluster(hardware(2, "scale_up { domain_size: 12 }")), std::invalid_argument);
  EXPECT_THROW(build_cluster(hardware(2, "scale_out { tiers: 4 }")), std::invalid_argument);
  EXPECT_THROW(build_cluster(hardware(2, "scale_out { ports { index: 8 } }")),
               std::invalid_argument);
  try {
    build_cluster(hardware(2, "scale_out { nic_bits_per_s: 0 }"));
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("scale_out.nic_bits_per_s"), std::string::npos)
        << e.what();
  }
  // A single node needs no scale-out or PCIe figures.
  config::Hardware single = hardware(1);
  single.clear_scale_out();
  single.clear_pcie();
  EXPECT_NO_THROW(build_cluster(single));
}

TEST(TopoGraph, CopiesKeepEdgeDescriptorsValid) {
  const Topology original = build_cluster(hardware(2));
  Topology copy = original;
  Topology assigned;
  assigned = copy;
  Topology moved = std::move(copy);
  for (const Topology* t : {&assigned, &moved}) {
    ASSERT_EQ(t->edges.size(), original.edges.size());
    EXPECT_EQ(t->attachment.size(), original.attachment.size());
    EXPECT_EQ(t->spec.scale_up.domain_size, 8);
    for (uint32_t i = 0; i < original.edges.size(); ++i) {
      const EdgeId e = t->edges[i];
      EXPECT_EQ(t->graph[e].index, i);
      EXPECT_EQ(boost::source(e, t->graph), boost::source(original.edges[i], original.graph));
      EXPECT_EQ(boost::target(e, t->graph), boost::target(original.edges[i], original.graph));
      // The descriptor must address this graph's property, not the original's.
      EXPECT_NE(&t->graph[e], &original.graph[original.edges[i]]);
    }
  }
}

TEST(TopoGraph, NamesOfKinds) {
  EXPECT_EQ(to_string(VertexKind::kNvSwitch), "nvswitch");
  EXPECT_EQ(to_string(LinkClass::kInfiniband), "infiniband");
  EXPECT_EQ(to_string(LinkLayer::kEthernet), "ethernet");
}

}  // namespace
}  // namespace racksim::topo
