#include "topologies/topology_graph.h"

#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "topologies/fabric_builder.h"
#include "topologies/fault_links.h"
#include "topologies/graph_builder.h"
#include "topologies/nic_selection.h"
#include "topologies/node_builder.h"

namespace racksim::topo {
namespace {

// The switch of a scale-up domain: a server's NVSwitches when the domain is one server, else
// the NVLink switch trays of the rack (or racks) that hold the domain.
VertexId add_scale_up_switch(GraphBuilder& builder, const ClusterSpec& spec, int node) {
  const int domain = node * spec.node.gpus / spec.scale_up.domain_size;
  if (spec.scale_up.domain_size == spec.node.gpus) {
    return builder.add_vertex(
        Vertex{VertexKind::kNvSwitch, fmt::format("n{}.nvswitch", node), node, 0});
  }
  return builder.add_vertex(
      Vertex{VertexKind::kNvSwitch, fmt::format("nvl{}.switch", domain), -1, domain});
}

}  // namespace

Topology::Topology(const Topology& other)
    : graph(other.graph),
      gpus(other.gpus),
      cpus(other.cpus),
      attachment(other.attachment),
      spec(other.spec),
      nodes(other.nodes),
      gpus_per_node(other.gpus_per_node) {
  reindex_edges();
}

Topology& Topology::operator=(const Topology& other) {
  if (this != &other) {
    graph = other.graph;
    gpus = other.gpus;
    cpus = other.cpus;
    attachment = other.attachment;
    spec = other.spec;
    nodes = other.nodes;
    gpus_per_node = other.gpus_per_node;
    reindex_edges();
  }
  return *this;
}

void Topology::reindex_edges() {
  // Iterating an undirected adjacency_list's edges yields them with the orientation they were
  // added with, which the copy preserves, so Hop::forward keeps its meaning.
  edges.assign(boost::num_edges(graph), EdgeId{});
  for (auto [it, end] = boost::edges(graph); it != end; ++it) {
    const uint32_t index = graph[*it].index;
    if (index >= edges.size()) {
      throw std::logic_error(
          fmt::format("edge index {} out of range: indices must be dense", index));
    }
    edges[index] = *it;
  }
}

Topology build_cluster(const config::Hardware& hw, const Faults& faults) {
  return build_cluster(cluster_spec(hw), faults);
}

Topology build_cluster(const ClusterSpec& resolved, const Faults& faults) {
  Topology topology;  // returned in place (NRVO); a copy would also be correct, just slower
  topology.spec = resolved;
  const ClusterSpec& spec = topology.spec;
  topology.nodes = spec.nodes;
  topology.gpus_per_node = spec.node.gpus;
  GraphBuilder builder(topology);
  const int nodes_per_domain = spec.scale_up.domain_size / spec.node.gpus;
  std::vector<std::vector<VertexId>> nics;
  VertexId scale_up_switch = 0;
  for (int node = 0; node < spec.nodes; ++node) {
    if (spec.node.kind != NodeKind::kMesh && node % nodes_per_domain == 0) {
      scale_up_switch = add_scale_up_switch(builder, spec, node);
    }
    nics.push_back(build_node(builder, spec, node, scale_up_switch));
    select_nics(topology, node, nics.back(), faults.dead_ports(node));
  }
  build_fabric(builder, spec, nics);
  degrade_links(topology, faults);
  return topology;
}

std::string_view to_string(VertexKind kind) {
  switch (kind) {
    case VertexKind::kGpu:
      return "gpu";
    case VertexKind::kNvSwitch:
      return "nvswitch";
    case VertexKind::kPcieSwitch:
      return "pcie_switch";
    case VertexKind::kCpu:
      return "cpu";
    case VertexKind::kNic:
      return "nic";
    case VertexKind::kLeaf:
      return "leaf";
    case VertexKind::kSpine:
      return "spine";
    case VertexKind::kCore:
      return "core";
    case VertexKind::kMeshPort:
      return "mesh_port";
  }
  return "unknown";
}

std::string_view to_string(LinkClass link_class) {
  switch (link_class) {
    case LinkClass::kNvlink:
      return "nvlink";
    case LinkClass::kPcie:
      return "pcie";
    case LinkClass::kInfiniband:
      return "infiniband";
    case LinkClass::kEthernet:
      return "ethernet";
    case LinkClass::kFabric:
      return "fabric";
    case LinkClass::kInterSocket:
      return "inter_socket";
    case LinkClass::kC2c:
      return "c2c";
  }
  return "unknown";
}

}  // namespace racksim::topo
