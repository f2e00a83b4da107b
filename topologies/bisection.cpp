#include "topologies/bisection.h"

#include <utility>
#include <vector>

#include <boost/graph/push_relabel_max_flow.hpp>

#include "topologies/fabric_search.h"

namespace racksim::topo {
namespace {

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, double,
        boost::property<boost::edge_residual_capacity_t, double,
                        boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

class FlowNetwork {
 public:
  explicit FlowNetwork(size_t vertices) : graph_(vertices) {}

  // An arc u -> v of `capacity` with its zero-capacity reverse, as push-relabel expects.
  void add_arc(size_t u, size_t v, double capacity) {
    auto capacity_map = boost::get(boost::edge_capacity, graph_);
    auto reverse_map = boost::get(boost::edge_reverse, graph_);
    const auto forward = boost::add_edge(u, v, graph_).first;
    const auto backward = boost::add_edge(v, u, graph_).first;
    capacity_map[forward] = capacity;
    capacity_map[backward] = 0;
    reverse_map[forward] = backward;
    reverse_map[backward] = forward;
  }

  double max_flow(size_t source, size_t sink) {
    return boost::push_relabel_max_flow(graph_, source, sink);
  }

 private:
  FlowGraph graph_;
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
  // Far more than any link: the members' own links bound what the halves can send.
  constexpr double kUnbounded = 1e30;
  const int half = cut.count / 2;
  for (const auto& [vertex, member] : members(topology, cut.network)) {
    const int at = member - cut.first;
    if (at < 0 || at >= 2 * half) continue;
    if (at < half) {
      network.add_arc(source, vertex, kUnbounded);
    } else {
      network.add_arc(vertex, sink, kUnbounded);
    }
  }
  return network.max_flow(source, sink);
}

double bisection_max_flow_bytes_per_s(const Topology& topology) {
  return bisection_max_flow_bytes_per_s(topology,
                                        BisectionCut{CutNetwork::kScaleOut, 0, topology.nodes});
}

}  // namespace racksim::topo
