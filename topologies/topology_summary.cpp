#include "topologies/topology_summary.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "topologies/bisection.h"

namespace racksim::topo {
namespace {

std::string join(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

// The NIC choices of the first node's GPUs.
std::vector<NicChoice> nic_choices(const Topology& t) {
  std::vector<NicChoice> out;
  std::map<VertexId, int> users;
  for (int g = 0; g < t.gpus_per_node; ++g) {
    for (VertexId nic : t.attachment[g].nics) ++users[nic];
  }
  for (int g = 0; g < t.gpus_per_node; ++g) {
    if (t.attachment[g].nics.empty()) continue;
    const Vertex& nic = t.graph[t.attachment[g].nics.front()];
    NicChoice c;
    c.gpu = g;
    c.socket = t.graph[t.gpus[g]].socket;
    c.nic = nic.name;
    c.link_layer = nic.link_layer;
    c.bits_per_s = nic.bits_per_s;
    c.nic_socket = nic.socket;
    c.sharing_gpus = users[t.attachment[g].nics.front()];
    out.push_back(c);
  }
  return out;
}

// What one GPU's channel gets from its NIC when every GPU of the node sends at once.
double channel_bytes_per_s(const ClusterSpec& spec, const NicChoice& c) {
  return spec.port_bytes_per_s(PortSpec{c.link_layer, c.bits_per_s}) / c.sharing_gpus;
}

double ring_bound(const ClusterSpec& spec, const std::vector<NicChoice>& choices) {
  if (choices.empty()) return 0;
  double slowest = INFINITY;
  for (const NicChoice& c : choices) slowest = std::min(slowest, channel_bytes_per_s(spec, c));
  return static_cast<double>(choices.size()) * slowest;
}

std::vector<TierSummary> tiers(const Topology& t) {
  const FabricSpec& f = t.spec.fabric;
  TierSummary nic{"nic -> leaf", 0, 0, 1}, eth{"ethernet nic -> leaf", 0, 0, 1};
  TierSummary leaf{"leaf -> spine", 0, 0, f.oversubscription};
  TierSummary core{"spine -> core", 0, 0, f.pod_oversubscription};
  TierSummary eth_up{"ethernet leaf -> spine", 0, 0, f.oversubscription};
  for (EdgeId e : t.edges) {
    const Edge& edge = t.graph[e];
    const Vertex& from = t.graph[boost::source(e, t.graph)];
    const Vertex& to = t.graph[boost::target(e, t.graph)];
    TierSummary* tier = nullptr;
    if (edge.link_class == LinkClass::kInfiniband) tier = &nic;
    if (edge.link_class == LinkClass::kEthernet) tier = &eth;
    if (edge.link_class == LinkClass::kFabric) {
      if (to.kind == VertexKind::kCore) {
        tier = &core;
      } else {
        tier = from.link_layer == LinkLayer::kEthernet ? &eth_up : &leaf;
      }
    }
    if (tier == nullptr) continue;
    ++tier->links;
    tier->bytes_per_s += edge.bytes_per_s;
  }
  std::vector<TierSummary> out;
  for (const TierSummary& tier : {nic, leaf, core, eth, eth_up}) {
    if (tier.links > 0) out.push_back(tier);
  }
  return out;
}

bool mixed_ports(const NodeSpec& node) {
  bool ib = false, eth = false;
  for (const PortSpec& p : node.ports) {
    ib |= p.link_layer == LinkLayer::kInfiniband;
    eth |= p.link_layer == LinkLayer::kEthernet;
  }
  return ib && eth;
}

void warn_link_layers(const TopologySummary& s, const ClusterSpec& spec,
                      std::vector<std::string>& out) {
  if (!mixed_ports(spec.node)) return;
  std::vector<int> ethernet, on_ethernet, sharing;
  for (size_t k = 0; k < spec.node.ports.size(); ++k) {
    if (spec.node.ports[k].link_layer == LinkLayer::kEthernet)
      ethernet.push_back(static_cast<int>(k));
  }
  for (const NicChoice& c : s.nics) {
    if (c.link_layer == LinkLayer::kEthernet) on_ethernet.push_back(c.gpu);
    if (c.sharing_gpus > 1) sharing.push_back(c.gpu);
  }
  out.push_back(
      fmt::format("mixed link layers: ports {} of each node are Ethernet, the others "
                  "InfiniBand; NCCL must not take the Ethernet ports for IB",
                  join(ethernet)));
  if (spec.treat_all_nics_as_ib) {
    out.push_back(fmt::format(
        "treat_all_nics_as_ib (what-if): GPUs {} send over Ethernet ports on the Ethernet "
        "network; ring all-reduce bound {:.1f} GB/s per node instead of {:.1f} with NCCL's "
        "choice",
        join(on_ethernet), s.ring_scale_out_bytes_per_s / 1e9,
        s.ring_scale_out_what_if_bytes_per_s / 1e9));
  } else {
    if (!sharing.empty()) {
      out.push_back(fmt::format("GPUs {} share InfiniBand NICs in pairs (ports {} are Ethernet)",
                                join(sharing), join(ethernet)));
    }
    out.push_back(fmt::format(
        "handing every port to NCCL as IB (the seed's misconfiguration; what-if "
        "scale_out.treat_all_nics_as_ib) would take the ring all-reduce bound from {:.1f} to "
        "{:.1f} GB/s per node",
        s.ring_scale_out_bytes_per_s / 1e9, s.ring_scale_out_what_if_bytes_per_s / 1e9));
  }
}

void warn_sockets(const TopologySummary& s, std::vector<std::string>& out) {
  for (const NicChoice& c : s.nics) {
    if (c.nic_socket != c.socket) {
      out.push_back(
          fmt::format("GPU {} (socket {}) sends through {} on socket {}: its RDMA "
                      "traffic crosses the inter-socket link",
                      c.gpu, c.socket, c.nic, c.nic_socket));
    }
  }
}

void warn_oversubscription(const ClusterSpec& spec, std::vector<std::string>& out) {
  const FabricSpec& f = spec.fabric;
  if (spec.nodes <= 1 || spec.nics_per_node() == 0) return;
  if (spec.units() > 1 && f.oversubscription > 1) {
    out.push_back(
        fmt::format("leaf uplinks oversubscribed {:g}:1: traffic between scalable "
                    "units gets 1/{:g} of the NIC bandwidth",
                    f.oversubscription, f.oversubscription));
  }
  if (spec.pods() > 1 && f.pod_oversubscription > 1) {
    out.push_back(fmt::format("spine -> core oversubscribed {:g}:1 above pods of {} GPUs",
                              f.pod_oversubscription,
                              f.units_per_pod * f.nodes_per_unit * spec.node.gpus));
  }
}

// Ports a switch needs, in links of one NIC's rate (aggregated uplinks counted as the ports
// they stand for), against the radix.
void warn_radix(const ClusterSpec& spec, std::vector<std::string>& out) {
  const FabricSpec& f = spec.fabric;
  if (f.switch_radix <= 0 || spec.nodes <= 1) return;
  const int rails = spec.nics_per_node();
  const int leaf_up = static_cast<int>(std::ceil(f.nodes_per_unit / f.oversubscription));
  if (f.nodes_per_unit + leaf_up > f.switch_radix) {
    out.push_back(fmt::format("a leaf needs {} ports ({} down, {} up) but switch_radix is {}",
                              f.nodes_per_unit + leaf_up, f.nodes_per_unit, leaf_up,
                              f.switch_radix));
  }
  const int leaves = (f.tiers == 3 ? f.units_per_pod : spec.units()) * rails;
  const int spine_down = static_cast<int>(std::ceil(double(leaves) * leaf_up / f.spines));
  const int spine_up =
      f.tiers == 3 ? static_cast<int>(std::ceil(spine_down / f.pod_oversubscription)) : 0;
  if (spine_down + spine_up > f.switch_radix) {
    out.push_back(fmt::format("a spine needs {} ports but switch_radix is {}",
                              spine_down + spine_up, f.switch_radix));
  }
}

}  // namespace

TopologySummary summarize(const Topology& t, const config::Hardware& hw, int max_flow_gpus) {
  const ClusterSpec& spec = t.spec;
  TopologySummary s;
  s.node_kind = std::string(to_string(spec.node.kind));
  s.nodes = t.nodes;
  s.gpus = static_cast<int>(t.num_gpus());
  s.gpus_per_node = t.gpus_per_node;
  s.scale_up_domain = spec.scale_up.domain_size;
  s.scale_up_domains = spec.domains();
  for (auto [it, end] = boost::vertices(t.graph); it != end; ++it) {
    ++s.counts[std::string(to_string(t.graph[*it].kind))];
  }
  s.scale_up_bytes_per_s = spec.scale_up.port_bytes_per_s;
  if (spec.node.kind == NodeKind::kMesh) {
    s.mesh_link_bytes_per_s = spec.scale_up.mesh_link_bytes_per_s;
    s.scale_up_bytes_per_s = std::min(s.scale_up_bytes_per_s,
                                      (spec.node.gpus - 1) * spec.scale_up.mesh_link_bytes_per_s);
  }
  s.nvls_bytes_per_s = spec.scale_up.nvls ? spec.scale_up.nvls_bytes_per_s : 0;
  s.pcie_bytes_per_s =
      spec.node.kind == NodeKind::kNvlTray ? spec.node.c2c_bytes_per_s : spec.node.pcie_bytes_per_s;
  s.sockets = t.sockets_per_node();
  s.host_memory_bytes = spec.node.memory_bytes;
  s.tiers = tiers(t);
  if (spec.nodes > 1 && spec.nics_per_node() > 0) {
    s.bisection_bytes_per_s = bisection_formula_bytes_per_s(spec);
    if (s.gpus <= max_flow_gpus)
      s.bisection_max_flow_bytes_per_s = bisection_max_flow_bytes_per_s(t);
  }
  s.bisection_tiers = bisection_per_tier(spec);
  if (s.gpus <= max_flow_gpus) add_max_flow(t, s.bisection_tiers);
  s.nics = nic_choices(t);
  for (const NicChoice& c : s.nics) s.nic_bytes_per_s += channel_bytes_per_s(spec, c);
  if (!s.nics.empty()) s.nic_bytes_per_s /= static_cast<double>(s.nics.size());
  s.ring_scale_out_bytes_per_s = ring_bound(spec, s.nics);
  if (mixed_ports(spec.node)) {
    config::Hardware flipped = hw;  // one node is enough: every node chooses alike
    flipped.set_nodes(1);
    flipped.mutable_scale_out()->set_treat_all_nics_as_ib(!spec.treat_all_nics_as_ib);
    const Topology other = build_cluster(flipped);
    s.nics_what_if = nic_choices(other);
    s.ring_scale_out_what_if_bytes_per_s = ring_bound(other.spec, s.nics_what_if);
  }
  warn_link_layers(s, spec, s.warnings);
  warn_sockets(s, s.warnings);
  warn_oversubscription(spec, s.warnings);
  warn_radix(spec, s.warnings);
  return s;
}

}  // namespace racksim::topo
