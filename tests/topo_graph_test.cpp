// The cluster graph and its routes (no simulation).
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "tests/support/test_hardware.h"
#include "topologies/routing.h"
#include "topologies/topology_graph.h"

namespace racksim::topo {
namespace {

constexpr double kNvlink = testing::kTestNvlink;
constexpr double kNic = testing::kTestNic;
constexpr double kPcie = testing::kTestPcie;

config::Hardware hardware(int nodes, const std::string& extra = "") {
  return testing::test_hardware(nodes, extra);
}

int count(const Topology& t, VertexKind kind) {
  int n = 0;
  for (auto [it, end] = boost::vertices(t.graph); it != end; ++it) n += t.graph[*it].kind == kind;
  return n;
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

std::vector<std::string> names(const Topology& t, const std::vector<VertexId>& vertices) {
  std::vector<std::string> out;
  for (VertexId v : vertices) out.push_back(t.graph[v].name);
  return out;
}

TEST(TopoGraph, OneNodeIsGpusAndOneNvSwitch) {
  const Topology t = build_cluster(hardware(1));
  EXPECT_EQ(boost::num_vertices(t.graph), 9u);
  EXPECT_EQ(boost::num_edges(t.graph), 8u);
  EXPECT_EQ(count(t, VertexKind::kNvSwitch), 1);
  EXPECT_EQ(count(t, VertexKind::kNic), 0);  // no scale-out network for a single node
  ASSERT_EQ(t.num_gpus(), 8u);
  EXPECT_EQ(t.graph[t.gpus[3]].name, "n0.gpu3");
  EXPECT_EQ(t.graph[t.gpus[3]].index, 3);
  EXPECT_EQ(t.graph[t.gpus[3]].node, 0);
}

TEST(TopoGraph, TwoNodesShareOneUnitWithSpines) {
  const Topology t = build_cluster(hardware(2));
  EXPECT_EQ(count(t, VertexKind::kGpu), 16);
  EXPECT_EQ(count(t, VertexKind::kNvSwitch), 2);
  EXPECT_EQ(count(t, VertexKind::kNic), 16);
  EXPECT_EQ(count(t, VertexKind::kLeaf), 8);   // one unit, 8 rails
  EXPECT_EQ(count(t, VertexKind::kSpine), 8);  // more than one leaf
  EXPECT_EQ(boost::num_vertices(t.graph), 50u);
  EXPECT_EQ(boost::num_edges(t.graph), 16u + 16 + 16 + 8 * 8);
  EXPECT_EQ(t.node_of_gpu(9), 1);
  EXPECT_EQ(t.graph[t.gpus[9]].name, "n1.gpu1");
}

TEST(TopoGraph, FortyNodesMakeTwoUnits) {
  const Topology t = build_cluster(hardware(40));
  EXPECT_EQ(count(t, VertexKind::kGpu), 320);
  EXPECT_EQ(count(t, VertexKind::kNvSwitch), 40);
  EXPECT_EQ(count(t, VertexKind::kNic), 320);
  EXPECT_EQ(count(t, VertexKind::kLeaf), 16);
  EXPECT_EQ(count(t, VertexKind::kSpine), 8);
  EXPECT_EQ(boost::num_vertices(t.graph), 704u);
  EXPECT_EQ(boost::num_edges(t.graph), 320u * 3 + 16 * 8);
  ASSERT_EQ(t.edges.size(), boost::num_edges(t.graph));
  for (uint32_t i = 0; i < t.edges.size(); ++i) EXPECT_EQ(t.graph[t.edges[i]].index, i);
}

TEST(TopoGraph, EdgesCarryEfficiencyAndLatencyPerClass) {
  const Topology t = build_cluster(hardware(40));
  std::set<double> uplinks;
  for (EdgeId e : t.edges) {
    const Edge& edge = t.graph[e];
    const VertexKind from = t.graph[boost::source(e, t.graph)].kind;
    switch (edge.link_class) {
      case LinkClass::kNvlink:
        EXPECT_EQ(from, VertexKind::kGpu);
        EXPECT_DOUBLE_EQ(edge.bytes_per_s, kNvlink);
        EXPECT_DOUBLE_EQ(edge.latency_s, 1e-6);
        break;
      case LinkClass::kPcie:
        EXPECT_EQ(from, VertexKind::kGpu);
        EXPECT_DOUBLE_EQ(edge.bytes_per_s, kPcie);
        EXPECT_DOUBLE_EQ(edge.latency_s, 1.5e-6);
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
  try {
    build_cluster(hardware(2, "scale_out { nic_bits_per_s: 0 }"));
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("scale_out.nic_bits_per_s"), std::string::npos)
        << e.what();
  }
  // A single node needs no scale-out figures.
  config::Hardware single = hardware(1);
  single.clear_scale_out();
  single.clear_pcie();
  EXPECT_NO_THROW(build_cluster(single));
}

TEST(TopoRouting, WithinANodeThroughTheNvSwitch) {
  const Topology t = build_cluster(hardware(2));
  Router router(t);
  const auto& hops = router.route(gpu(t, 0, 2), gpu(t, 0, 5));
  EXPECT_EQ(names(t, path(t, gpu(t, 0, 2), hops)),
            (std::vector<std::string>{"n0.gpu2", "n0.nvswitch", "n0.gpu5"}));
  ASSERT_EQ(hops.size(), 2u);
  EXPECT_TRUE(hops[0].forward);
  EXPECT_FALSE(hops[1].forward);
  EXPECT_DOUBLE_EQ(router.latency_s(hops), 2e-6);
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(hops), kNvlink);
}

TEST(TopoRouting, SameRailAcrossNodesStaysUnderTheLeaf) {
  const Topology t = build_cluster(hardware(2));
  Router router(t);
  const auto& hops = router.route(gpu(t, 0, 3), gpu(t, 1, 3));
  EXPECT_EQ(
      names(t, path(t, gpu(t, 0, 3), hops)),
      (std::vector<std::string>{"n0.gpu3", "n0.nic3", "su0.rail3.leaf", "n1.nic3", "n1.gpu3"}));
  EXPECT_DOUBLE_EQ(router.latency_s(hops), 2 * 1.5e-6 + 2 * 1e-6);
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(hops), kNic);
}

TEST(TopoRouting, CrossRailGoesThroughASpineNeverAGpu) {
  const Topology t = build_cluster(hardware(2));
  Router router(t);
  const auto& hops = router.route(gpu(t, 0, 0), gpu(t, 1, 1));
  ASSERT_EQ(hops.size(), 6u);
  const auto vertices = path(t, gpu(t, 0, 0), hops);
  const std::vector<VertexKind> kinds = {VertexKind::kGpu,   VertexKind::kNic,  VertexKind::kLeaf,
                                         VertexKind::kSpine, VertexKind::kLeaf, VertexKind::kNic,
                                         VertexKind::kGpu};
  for (size_t i = 0; i < vertices.size(); ++i) EXPECT_EQ(t.graph[vertices[i]].kind, kinds[i]);
  EXPECT_EQ(t.graph[vertices[2]].name, "su0.rail0.leaf");
  EXPECT_EQ(t.graph[vertices[4]].name, "su0.rail1.leaf");
  EXPECT_DOUBLE_EQ(router.latency_s(hops), 2 * 1.5e-6 + 2 * 1e-6 + 2 * 0.5e-6);
  // The leaf uplinks (32 servers' worth over 8 spines) are wider than the NIC.
  EXPECT_DOUBLE_EQ(router.bottleneck_bytes_per_s(hops), kNic);
}

TEST(TopoRouting, AcrossUnitsOnTheSameRailGoesThroughASpine) {
  const Topology t = build_cluster(hardware(40));
  Router router(t);
  const auto& hops = router.route(gpu(t, 0, 4), gpu(t, 39, 4));
  EXPECT_EQ(hops.size(), 6u);
  const auto vertices = path(t, gpu(t, 0, 4), hops);
  EXPECT_EQ(t.graph[vertices[2]].name, "su0.rail4.leaf");
  EXPECT_EQ(t.graph[vertices[3]].kind, VertexKind::kSpine);
  EXPECT_EQ(t.graph[vertices[4]].name, "su1.rail4.leaf");
}

TEST(TopoRouting, NoGpuIsEverATransit) {
  const Topology t = build_cluster(hardware(40));
  Router router(t);
  for (uint32_t src = 0; src < t.num_gpus(); src += 7) {
    for (uint32_t dst = 0; dst < t.num_gpus(); dst += 13) {
      if (src == dst) continue;
      const auto vertices = path(t, t.gpus[src], router.route(t.gpus[src], t.gpus[dst]));
      for (size_t i = 1; i + 1 < vertices.size(); ++i) {
        EXPECT_NE(t.graph[vertices[i]].kind, VertexKind::kGpu) << src << " -> " << dst;
      }
      EXPECT_EQ(vertices.back(), t.gpus[dst]);
    }
  }
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
      EXPECT_EQ(names(t, path(t, src, first)), names(t, path(t, src, router.route(src, dst))));
      EXPECT_EQ(names(t, path(t, src, first)), names(t, path(t, src, other.route(src, dst))));
      ++spine_use[t.graph[path(t, src, first)[3]].name];
    }
  }
  // 256 pairs over 8 spines: every spine carries some, none carries most.
  EXPECT_EQ(spine_use.size(), 8u);
  for (const auto& [spine, pairs] : spine_use) EXPECT_LT(pairs, 64) << spine;
}

// Hops of the shortest path through non-GPU vertices, by a plain breadth-first search.
int reference_length(const Topology& t, VertexId src, VertexId dst) {
  std::vector<int> dist(boost::num_vertices(t.graph), -1);
  std::vector<VertexId> queue{src};
  dist[src] = 0;
  for (size_t head = 0; head < queue.size(); ++head) {
    const VertexId v = queue[head];
    if (v == dst) return dist[v];
    if (v != src && t.graph[v].kind == VertexKind::kGpu) continue;
    for (auto [it, end] = boost::adjacent_vertices(v, t.graph); it != end; ++it) {
      if (dist[*it] < 0) {
        dist[*it] = dist[v] + 1;
        queue.push_back(*it);
      }
    }
  }
  return -1;
}

TEST(TopoRouting, RoutesAreShortestAndIndependentOfQueryOrder) {
  // Two NICs per GPU add equal-cost choices at the first and last hops.
  const Topology t = build_cluster(hardware(40, "scale_out { nics_per_gpu: 2 }"));
  std::vector<std::pair<VertexId, VertexId>> pairs;
  for (uint32_t src = 0; src < t.num_gpus(); src += 11) {
    for (uint32_t dst = 3; dst < t.num_gpus(); dst += 17)
      pairs.emplace_back(t.gpus[src], t.gpus[dst]);
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
    EXPECT_EQ(static_cast<int>(hops.size()), reference_length(t, src, dst));
    const auto vertices = path(t, src, hops);
    EXPECT_EQ(vertices.back(), dst);
    if (vertices.size() > 3)
      first_nics.insert(t.graph[vertices[1]].name.substr(t.graph[vertices[1]].name.size() - 2));
  }
  EXPECT_EQ(first_nics, (std::set<std::string>{".0", ".1"}));  // both NICs of a GPU get used
}

TEST(TopoRouting, SelfRouteIsEmpty) {
  const Topology t = build_cluster(hardware(2));
  Router router(t);
  EXPECT_TRUE(router.route(t.gpus[0], t.gpus[0]).empty());
}

TEST(TopoRouting, UnreachableNamesBothEnds) {
  Topology t;
  t.gpus_per_node = 1;
  t.nodes = 2;
  t.gpus.push_back(boost::add_vertex(Vertex{VertexKind::kGpu, "lonely0", 0, 0}, t.graph));
  t.gpus.push_back(boost::add_vertex(Vertex{VertexKind::kGpu, "lonely1", 1, 0}, t.graph));
  Router router(t);
  try {
    router.route(t.gpus[0], t.gpus[1]);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("lonely0"), std::string::npos) << what;
    EXPECT_NE(what.find("lonely1"), std::string::npos) << what;
  }
}

TEST(TopoRouting, GpusDoNotForwardEvenWhenTheyAreTheOnlyPath) {
  // a - gpu - b: the only path between the two GPUs a and b crosses a third GPU.
  Topology t;
  const auto a = boost::add_vertex(Vertex{VertexKind::kGpu, "a", 0, 0}, t.graph);
  const auto mid = boost::add_vertex(Vertex{VertexKind::kGpu, "mid", 0, 1}, t.graph);
  const auto b = boost::add_vertex(Vertex{VertexKind::kGpu, "b", 0, 2}, t.graph);
  t.edges.push_back(boost::add_edge(a, mid, Edge{1, 0, LinkClass::kNvlink, 0}, t.graph).first);
  t.edges.push_back(boost::add_edge(mid, b, Edge{1, 0, LinkClass::kNvlink, 1}, t.graph).first);
  Router router(t);
  EXPECT_EQ(router.route(a, mid).size(), 1u);
  EXPECT_THROW(router.route(a, b), std::runtime_error);
}

TEST(TopoGraph, CopiesKeepEdgeDescriptorsValid) {
  const Topology original = build_cluster(hardware(2));
  Topology copy = original;
  Topology assigned;
  assigned = copy;
  Topology moved = std::move(copy);
  for (const Topology* t : {&assigned, &moved}) {
    ASSERT_EQ(t->edges.size(), original.edges.size());
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
}

}  // namespace
}  // namespace racksim::topo
