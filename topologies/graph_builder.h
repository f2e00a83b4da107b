// Adds vertices and edges to a Topology's graph, keeping its edge index dense.
#pragma once

#include <string>

#include "topologies/topology_graph.h"

namespace racksim::topo {

class GraphBuilder {
 public:
  explicit GraphBuilder(Topology& topology) : topology_(topology) {}

  VertexId add_vertex(Vertex vertex) {
    return boost::add_vertex(std::move(vertex), topology_.graph);
  }

  // `from` -> `to` is the edge's forward direction; by convention it points away from the GPUs
  // (GPU -> switch -> NIC -> leaf -> spine -> core, GPU -> CPU).
  uint32_t add_edge(VertexId from, VertexId to, double bytes_per_s, double latency_s,
                    LinkClass link_class) {
    const auto index = static_cast<uint32_t>(topology_.edges.size());
    topology_.edges.push_back(
        boost::add_edge(from, to, Edge{bytes_per_s, latency_s, link_class, index}, topology_.graph)
            .first);
    return index;
  }

  Topology& topology() { return topology_; }

 private:
  Topology& topology_;
};

}  // namespace racksim::topo
