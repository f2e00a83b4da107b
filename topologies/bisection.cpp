#include "topologies/bisection.h"

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <boost/graph/push_relabel_max_flow.hpp>

#include "topologies/fabric_search.h"

namespace racksim::topo {
namespace {

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
// Integer capacities: push-relabel's invariants (Boost asserts algo.is_flow() in debug builds)
// hold exactly only in exact arithmetic; with doubles, rounding breaks them.
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, int64_t,
        boost::property<boost::edge_residual_capacity_t, int64_t,
                        boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

// Arcs are collected in bytes per second, then scaled by the largest power of two that keeps
// the sum of all capacities, unbounded arcs included, below 2^61, so that link rates with a few
// fractional bits stay exact and no excess push-relabel accumulates (at most that sum)
// overflows int64 (UBSan found the sum of the unbounded arcs from the source overflowing).
class FlowNetwork {
 public:
  explicit FlowNetwork(size_t vertices) : vertices_(vertices) {}

  // An arc u -> v of `capacity` bytes per second; unbounded: more than all the links together.
  void add_arc(size_t u, size_t v, double capacity) {
    arcs_.push_back({u, v, capacity});
    total_ += capacity;
  }
  void add_unbounded_arc(size_t u, size_t v) {
    arcs_.push_back({u, v, -1});
    ++unbounded_arcs_;
  }

  double max_flow(size_t source, size_t sink) {
    constexpr double kLimit = 4611686018427387904.0;  // 2^62
    const double unbounded = total_ + 1;
    const double sum = total_ + static_cast<double>(unbounded_arcs_) * unbounded;
    double scale = 1;
    while (sum * scale * 2 < kLimit / 2 && scale < 1e12) scale *= 2;
    while (sum * scale >= kLimit / 2) scale /= 2;
    FlowGraph graph(vertices_);
    auto capacity_map = boost::get(boost::edge_capacity, graph);
    auto reverse_map = boost::get(boost::edge_reverse, graph);
    for (const Arc& arc : arcs_) {
      const auto forward = boost::add_edge(arc.u, arc.v, graph).first;
      const auto backward = boost::add_edge(arc.v, arc.u, graph).first;
      capacity_map[forward] =
          static_cast<int64_t>(std::llround((arc.capacity < 0 ? unbounded : arc.capacity) * scale));
      capacity_map[backward] = 0;  // the zero-capacity reverse push-relabel expects
      reverse_map[forward] = backward;
      reverse_map[backward] = forward;
    }
    return static_cast<double>(boost::push_relabel_max_flow(graph, source, sink)) / scale;
  }

 private:
  struct Arc {
    size_t u, v;
    double capacity;  // < 0: unbounded
  };
  size_t vertices_;
  std::vector<Arc> arcs_;
  double total_ = 0;
  size_t unbounded_arcs_ = 0;
};

bool in_fabric(const Vertex& v) {
  return is_fabric_switch(v.kind) ||
         (v.kind == VertexKind::kNic && v.link_layer == LinkLayer::kInfiniband);
}

bool carries(const Topology& t, EdgeId e, CutNetwork network) {
  if (network == CutNetwork::kScaleUp) return t.graph[e].link_class == LinkClass::kNvlink;
  return in_fabric(t.graph[boost::source(e, t.graph)]) &&
         in_fabric(t.graph[boost::target(e, t.graph)]);
}

// The endpoints of a cut's members: every GPU vertex (by global index) for scale-up, every
// InfiniBand NIC with its node for scale-out.
std::vector<std::pair<VertexId, int>> members(const Topology& t, CutNetwork network) {
  std::vector<std::pair<VertexId, int>> out;
  if (network == CutNetwork::kScaleUp) {
    for (size_t g = 0; g < t.gpus.size(); ++g) out.emplace_back(t.gpus[g], static_cast<int>(g));
    return out;
  }
  for (auto [it, end] = boost::vertices(t.graph); it != end; ++it) {
    const Vertex& v = t.graph[*it];
    if (v.kind == VertexKind::kNic && v.link_layer == LinkLayer::kInfiniband)
      out.emplace_back(*it, v.node);
  }
  return out;
}

}  // namespace

double scale_out_bisection_formula_bytes_per_s(const ClusterSpec& spec, int block_nodes) {
  double per_node = 0;
  for (const PortSpec& port : spec.node.ports) {
    if (port.link_layer == LinkLayer::kInfiniband) per_node += spec.port_bytes_per_s(port);
  }
  const FabricSpec& f = spec.fabric;
  double factor = 1;
  if (block_nodes > f.nodes_per_unit) factor *= f.oversubscription;
  if (f.tiers == 3 && f.units_per_pod >= 1 && block_nodes > f.units_per_pod * f.nodes_per_unit)
    factor *= f.pod_oversubscription;
  return (block_nodes / 2) * per_node / factor;
}

double bisection_formula_bytes_per_s(const ClusterSpec& spec) {
  return scale_out_bisection_formula_bytes_per_s(spec, spec.nodes);
}

double bisection_max_flow_bytes_per_s(const Topology& topology, const BisectionCut& cut) {
  const Graph& g = topology.graph;
  const size_t n = boost::num_vertices(g);
  const size_t source = n;
  const size_t sink = n + 1;
  FlowNetwork network(n + 2);
  for (EdgeId e : topology.edges) {
    if (!carries(topology, e, cut.network)) continue;
    const VertexId u = boost::source(e, g);
    const VertexId v = boost::target(e, g);
    network.add_arc(u, v, g[e].bytes_per_s);
    network.add_arc(v, u, g[e].bytes_per_s);
  }
  // Unbounded arcs from the source and to the sink: the members' own links bound the flow.
  const int half = cut.count / 2;
  for (const auto& [vertex, member] : members(topology, cut.network)) {
    const int at = member - cut.first;
    if (at < 0 || at >= 2 * half) continue;
    if (at < half) {
      network.add_unbounded_arc(source, vertex);
    } else {
      network.add_unbounded_arc(vertex, sink);
    }
  }
  return network.max_flow(source, sink);
}

double bisection_max_flow_bytes_per_s(const Topology& topology) {
  return bisection_max_flow_bytes_per_s(topology,
                                        BisectionCut{CutNetwork::kScaleOut, 0, topology.nodes});
}

}  // namespace racksim::topo
