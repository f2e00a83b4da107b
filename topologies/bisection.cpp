#include "topologies/bisection.h"

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

}  // namespace

double bisection_formula_bytes_per_s(const ClusterSpec& spec) {
  double per_node = 0;
  for (const PortSpec& port : spec.node.ports) {
    if (port.link_layer == LinkLayer::kInfiniband) per_node += spec.port_bytes_per_s(port);
  }
  double factor = 1;
  if (spec.units() > 1) factor *= spec.fabric.oversubscription;
  if (spec.pods() > 1) factor *= spec.fabric.pod_oversubscription;
  return (spec.nodes / 2) * per_node / factor;
}

double bisection_max_flow_bytes_per_s(const Topology& topology) {
  const Graph& g = topology.graph;
  const size_t n = boost::num_vertices(g);
  const size_t source = n;
  const size_t sink = n + 1;
  FlowNetwork network(n + 2);
  for (EdgeId e : topology.edges) {
    const VertexId u = boost::source(e, g);
    const VertexId v = boost::target(e, g);
    if (!in_fabric(g[u]) || !in_fabric(g[v])) continue;
    network.add_arc(u, v, g[e].bytes_per_s);
    network.add_arc(v, u, g[e].bytes_per_s);
  }
  // Far more than any link: the NICs' own links bound what the halves can send.
  constexpr double kUnbounded = 1e30;
  const int half = topology.nodes / 2;
  for (auto [it, end] = boost::vertices(g); it != end; ++it) {
    const Vertex& v = g[*it];
    if (v.kind != VertexKind::kNic || v.link_layer != LinkLayer::kInfiniband) continue;
    if (v.node < half) {
      network.add_arc(source, *it, kUnbounded);
    } else if (v.node < 2 * half) {
      network.add_arc(*it, sink, kUnbounded);
    }
  }
  return network.max_flow(source, sink);
}

}  // namespace racksim::topo
