#include "topologies/graphviz.h"

#include <fmt/format.h>
#include <boost/graph/graphviz.hpp>

namespace racksim::topo {
namespace {

std::string_view shape(VertexKind kind) {
  switch (kind) {
    case VertexKind::kGpu:
      return "box";
    case VertexKind::kCpu:
      return "doubleoctagon";
    case VertexKind::kNic:
      return "ellipse";
    case VertexKind::kPcieSwitch:
      return "hexagon";
    default:
      return "diamond";
  }
}

}  // namespace

void write_dot(std::ostream& out, const Topology& topology) {
  const Graph& g = topology.graph;
  auto vertex_writer = [&](std::ostream& os, VertexId v) {
    os << fmt::format("[label=\"{}\", shape={}]", g[v].name, shape(g[v].kind));
  };
  auto edge_writer = [&](std::ostream& os, EdgeId e) {
    os << fmt::format("[label=\"{} {:.0f}\"]", to_string(g[e].link_class), g[e].bytes_per_s / 1e9);
  };
  boost::write_graphviz(out, g, vertex_writer, edge_writer);
}

}  // namespace racksim::topo
