#include "topologies/topology_graph.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace racksim::topo {
namespace {

// Rejects a field outside its valid range with a message naming the field.
void require(bool ok, std::string_view field, double value, std::string_view expected) {
  if (!ok) {
    throw std::invalid_argument(
        fmt::format("hardware.{} = {} is invalid: expected {}", field, value, expected));
  }
}

void require_positive(double value, std::string_view field) {
  // Comparisons with NaN are false, so NaN is rejected too.
  require(value > 0 && std::isfinite(value), field, value, "a finite value > 0");
}

void require_non_negative(double value, std::string_view field) {
  require(value >= 0 && std::isfinite(value), field, value, "a finite value >= 0");
}

void require_efficiency(double value, std::string_view field) {
  require(value > 0 && value <= 1, field, value, "an efficiency in (0, 1]");
}

int num_units(const config::Hardware& hw) {
  const int per_unit = hw.scale_out().nodes_per_leaf();
  return (hw.nodes() + per_unit - 1) / per_unit;
}

int num_rails(const config::Hardware& hw) {
  return hw.gpus_per_node() * hw.scale_out().nics_per_gpu();
}

// Only the fields that the built graph uses are checked: a single node has no scale-out
// network, so its scale_out and pcie sections may be left empty.
void validate(const config::Hardware& hw) {
  require(hw.nodes() >= 1, "nodes", hw.nodes(), "at least 1 node");
  require(hw.gpus_per_node() >= 1, "gpus_per_node", hw.gpus_per_node(), "at least 1 GPU");
  require_positive(hw.scale_up().bytes_per_s(), "scale_up.bytes_per_s");
  require_efficiency(hw.scale_up().efficiency(), "scale_up.efficiency");
  require_non_negative(hw.scale_up().latency_s(), "scale_up.latency_s");
  if (hw.nodes() == 1) return;

  const auto& so = hw.scale_out();
  require(so.nics_per_gpu() >= 1, "scale_out.nics_per_gpu", so.nics_per_gpu(),
          "at least 1 NIC per GPU when there is more than one node");
  require(so.nodes_per_leaf() >= 1, "scale_out.nodes_per_leaf", so.nodes_per_leaf(),
          "at least 1 node per leaf");
  require_positive(so.nic_bits_per_s(), "scale_out.nic_bits_per_s");
  require_efficiency(so.efficiency(), "scale_out.efficiency");
  require_non_negative(so.nic_latency_s(), "scale_out.nic_latency_s");
  require_positive(hw.pcie().bytes_per_s(), "pcie.bytes_per_s");
  require_efficiency(hw.pcie().efficiency(), "pcie.efficiency");
  require_non_negative(hw.pcie().latency_s(), "pcie.latency_s");
  if (num_units(hw) * num_rails(hw) > 1) {  // the leaves must be joined by spines
    require(so.spines() >= 1, "scale_out.spines", so.spines(),
            "at least 1 spine when there is more than one leaf");
    require_positive(so.oversubscription(), "scale_out.oversubscription");
    require_non_negative(so.switch_latency_s(), "scale_out.switch_latency_s");
  }
}

class ClusterBuilder {
 public:
  ClusterBuilder(const config::Hardware& hw, Topology& topology) : hw_(hw), topology_(topology) {
    topology_.nodes = hw.nodes();
    topology_.gpus_per_node = hw.gpus_per_node();
  }

  void build() {
    for (int node = 0; node < hw_.nodes(); ++node) build_node(node);
    if (hw_.nodes() > 1) build_fabric();
  }

 private:
  VertexId add_vertex(VertexKind kind, std::string name, int node, int index) {
    return boost::add_vertex(Vertex{kind, std::move(name), node, index}, topology_.graph);
  }

  // `from` -> `to` is the edge's forward direction; by convention it points away from the GPUs.
  void add_edge(VertexId from, VertexId to, double bytes_per_s, double latency_s,
                LinkClass link_class) {
    const auto index = static_cast<uint32_t>(topology_.edges.size());
    topology_.edges.push_back(
        boost::add_edge(from, to, Edge{bytes_per_s, latency_s, link_class, index}, topology_.graph)
            .first);
  }

  void build_node(int node) {
    const int gpus = hw_.gpus_per_node();
    const auto& up = hw_.scale_up();
    const size_t first_gpu = topology_.gpus.size();
    for (int g = 0; g < gpus; ++g) {
      topology_.gpus.push_back(
          add_vertex(VertexKind::kGpu, fmt::format("n{}.gpu{}", node, g), node, g));
    }
    const VertexId nvswitch =
        add_vertex(VertexKind::kNvSwitch, fmt::format("n{}.nvswitch", node), node, 0);
    // Half the GPU -> GPU latency on each side, so that a GPU -> switch -> GPU route adds up to
    // scale_up.latency_s.
    for (int g = 0; g < gpus; ++g) {
      add_edge(topology_.gpus[first_gpu + g], nvswitch, up.bytes_per_s() * up.efficiency(),
               up.latency_s() / 2, LinkClass::kNvlink);
    }
    if (hw_.nodes() > 1) build_nics(node, first_gpu);
  }

  void build_nics(int node, size_t first_gpu) {
    const int per_gpu = hw_.scale_out().nics_per_gpu();
    const auto& pcie = hw_.pcie();
    std::vector<VertexId>& nics = nics_.emplace_back();
    for (int g = 0; g < hw_.gpus_per_node(); ++g) {
      for (int j = 0; j < per_gpu; ++j) {
        const std::string name = per_gpu == 1 ? fmt::format("n{}.nic{}", node, g)
                                              : fmt::format("n{}.nic{}.{}", node, g, j);
        nics.push_back(add_vertex(VertexKind::kNic, name, node, g * per_gpu + j));
        add_edge(topology_.gpus[first_gpu + g], nics.back(), pcie.bytes_per_s() * pcie.efficiency(),
                 pcie.latency_s(), LinkClass::kPcie);
      }
    }
  }

  // Rail-optimized leaves (one per scalable unit and NIC rail), then the spines that join them.
  void build_fabric() {
    const auto& so = hw_.scale_out();
    const double nic_bytes_per_s = so.nic_bits_per_s() / 8 * so.efficiency();
    const int units = num_units(hw_);
    const int rails = num_rails(hw_);
    std::vector<std::vector<VertexId>> leaves(units);  // [unit][rail]
    for (int u = 0; u < units; ++u) {
      for (int r = 0; r < rails; ++r) {
        leaves[u].push_back(
            add_vertex(VertexKind::kLeaf, fmt::format("su{}.rail{}.leaf", u, r), -1, r));
      }
    }
    std::vector<VertexId> spines;
    if (units * rails > 1) {
      for (int s = 0; s < so.spines(); ++s) {
        spines.push_back(add_vertex(VertexKind::kSpine, fmt::format("spine{}", s), -1, s));
      }
    }
    // Edge creation order: NIC links node by node, then leaf uplinks.
    for (int node = 0; node < hw_.nodes(); ++node) {
      const int unit = node / so.nodes_per_leaf();
      for (int r = 0; r < rails; ++r) {
        add_edge(nics_[node][r], leaves[unit][r], nic_bytes_per_s, so.nic_latency_s(),
                 LinkClass::kInfiniband);
      }
    }
    // A leaf has ports for a full scalable unit whether or not every server is there: its
    // uplink capacity is that of nodes_per_leaf NICs divided by the oversubscription, spread
    // evenly over the spines (one aggregated edge per leaf and spine).
    const double uplink =
        so.nodes_per_leaf() * nic_bytes_per_s / (spines.size() * so.oversubscription());
    for (int u = 0; u < units; ++u) {
      for (VertexId leaf : leaves[u]) {
        for (VertexId spine : spines) {
          add_edge(leaf, spine, uplink, so.switch_latency_s(), LinkClass::kFabric);
        }
      }
    }
  }

  const config::Hardware& hw_;
  Topology& topology_;
  std::vector<std::vector<VertexId>> nics_;  // [node][rail]
};

}  // namespace

Topology::Topology(const Topology& other)
    : graph(other.graph), gpus(other.gpus), nodes(other.nodes), gpus_per_node(other.gpus_per_node) {
  reindex_edges();
}

Topology& Topology::operator=(const Topology& other) {
  if (this != &other) {
    graph = other.graph;
    gpus = other.gpus;
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

Topology build_cluster(const config::Hardware& hw) {
  validate(hw);
  Topology topology;  // returned in place (NRVO); a copy would also be correct, just slower
  ClusterBuilder(hw, topology).build();
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
  }
  return "unknown";
}

}  // namespace racksim::topo
