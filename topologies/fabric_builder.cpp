#include "topologies/fabric_builder.h"

#include <fmt/format.h>

namespace racksim::topo {
namespace {

class FabricBuilder {
 public:
  FabricBuilder(GraphBuilder& builder, const ClusterSpec& spec,
                const std::vector<std::vector<VertexId>>& nics)
      : b_(builder), spec_(spec), f_(spec.fabric), nics_(nics) {
    for (int k = 0; k < spec.nics_per_node(); ++k) {
      (spec.node.ports[k].link_layer == LinkLayer::kEthernet ? ethernet_ports_ : ib_rails_)
          .push_back(k);
    }
  }

  void build() {
    build_ib_leaves();
    build_ethernet_leaves();
    connect_nics();
    if (f_.tiers == 3) {
      build_pods();
    } else {
      build_spines();
    }
    build_ethernet_spines();
  }

 private:
  double port_rate(int port) const { return spec_.port_bytes_per_s(spec_.node.ports[port]); }

  VertexId switch_vertex(VertexKind kind, std::string name, int index, LinkLayer layer) {
    Vertex v{kind, std::move(name), -1, index};
    v.link_layer = layer;
    return b_.add_vertex(std::move(v));
  }

  void build_ib_leaves() {
    leaves_.resize(spec_.units());
    for (int u = 0; u < spec_.units(); ++u) {
      for (int rail : ib_rails_) {
        leaves_[u].push_back(switch_vertex(VertexKind::kLeaf,
                                           fmt::format("su{}.rail{}.leaf", u, rail), rail,
                                           LinkLayer::kInfiniband));
      }
    }
  }

  void build_ethernet_leaves() {
    if (ethernet_ports_.empty()) return;
    for (int u = 0; u < spec_.units(); ++u) {
      eth_leaves_.push_back(switch_vertex(VertexKind::kLeaf, fmt::format("su{}.eth.leaf", u), u,
                                          LinkLayer::kEthernet));
    }
  }

  // Node by node, port by port: NIC -> its leaf.
  void connect_nics() {
    for (int node = 0; node < spec_.nodes; ++node) {
      const int unit = node / f_.nodes_per_unit;
      int rail_slot = 0;
      for (int k = 0; k < spec_.nics_per_node(); ++k) {
        const bool ethernet = spec_.node.ports[k].link_layer == LinkLayer::kEthernet;
        const VertexId leaf = ethernet ? eth_leaves_[unit] : leaves_[unit][rail_slot++];
        b_.add_edge(nics_[node][k], leaf, port_rate(k), f_.nic_latency_s,
                    ethernet ? LinkClass::kEthernet : LinkClass::kInfiniband);
      }
    }
  }

  // A leaf has ports for a full unit: its uplink capacity is that of nodes_per_leaf NICs
  // divided by the oversubscription, spread evenly over the spines it links to.
  double leaf_uplink(int rail, int spines) const {
    return f_.nodes_per_unit * port_rate(rail) / (spines * f_.oversubscription);
  }

  void link_leaves(int first_unit, int end_unit, const std::vector<VertexId>& spines) {
    for (int u = first_unit; u < end_unit; ++u) {
      for (size_t r = 0; r < ib_rails_.size(); ++r) {
        const double uplink = leaf_uplink(ib_rails_[r], static_cast<int>(spines.size()));
        for (VertexId spine : spines) {
          b_.add_edge(leaves_[u][r], spine, uplink, f_.switch_latency_s, LinkClass::kFabric);
        }
      }
    }
  }

  void build_spines() {
    if (spec_.units() * ib_rails_.size() <= 1) return;  // one leaf needs no spine
    std::vector<VertexId> spines;
    for (int s = 0; s < f_.spines; ++s) {
      spines.push_back(
          switch_vertex(VertexKind::kSpine, fmt::format("spine{}", s), s, LinkLayer::kInfiniband));
    }
    link_leaves(0, spec_.units(), spines);
  }

  void build_pods() {
    if (spec_.units() * ib_rails_.size() <= 1) return;
    std::vector<VertexId> all_spines;
    for (int p = 0; p < spec_.pods(); ++p) {
      std::vector<VertexId> spines;
      for (int s = 0; s < f_.spines; ++s) {
        spines.push_back(switch_vertex(VertexKind::kSpine, fmt::format("pod{}.spine{}", p, s), s,
                                       LinkLayer::kInfiniband));
      }
      const int first = p * f_.units_per_pod;
      link_leaves(first, std::min(first + f_.units_per_pod, spec_.units()), spines);
      all_spines.insert(all_spines.end(), spines.begin(), spines.end());
    }
    if (spec_.pods() <= 1) return;
    double spine_down = 0;  // what one spine receives from the leaves of a full pod
    for (int rail : ib_rails_) spine_down += f_.units_per_pod * leaf_uplink(rail, f_.spines);
    const double core_link = spine_down / (f_.cores * f_.pod_oversubscription);
    for (int c = 0; c < f_.cores; ++c) {
      const VertexId core =
          switch_vertex(VertexKind::kCore, fmt::format("core{}", c), c, LinkLayer::kInfiniband);
      for (VertexId spine : all_spines) {
        b_.add_edge(spine, core, core_link, f_.switch_latency_s, LinkClass::kFabric);
      }
    }
  }

  void build_ethernet_spines() {
    if (eth_leaves_.size() <= 1) return;
    const int spines = std::max(f_.spines, 1);
    double down = 0;  // the Ethernet ports of a full unit
    for (int port : ethernet_ports_) down += f_.nodes_per_unit * port_rate(port);
    const double uplink = down / (spines * f_.oversubscription);
    for (int s = 0; s < spines; ++s) {
      const VertexId spine =
          switch_vertex(VertexKind::kSpine, fmt::format("eth.spine{}", s), s, LinkLayer::kEthernet);
      for (VertexId leaf : eth_leaves_) {
        b_.add_edge(leaf, spine, uplink, f_.switch_latency_s, LinkClass::kFabric);
      }
    }
  }

  GraphBuilder& b_;
  const ClusterSpec& spec_;
  const FabricSpec& f_;
  const std::vector<std::vector<VertexId>>& nics_;
  std::vector<int> ib_rails_;                  // InfiniBand port indices
  std::vector<int> ethernet_ports_;            // Ethernet port indices
  std::vector<std::vector<VertexId>> leaves_;  // [unit][slot in ib_rails_]
  std::vector<VertexId> eth_leaves_;           // [unit]
};

}  // namespace

void build_fabric(GraphBuilder& builder, const ClusterSpec& spec,
                  const std::vector<std::vector<VertexId>>& nics) {
  if (spec.nodes <= 1 || spec.nics_per_node() == 0) return;
  FabricBuilder(builder, spec, nics).build();
}

}  // namespace racksim::topo
