#include "topologies/cluster_spec.h"

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

NodeKind node_kind(config::Hardware::NodeKind kind) {
  switch (kind) {
    case config::Hardware::NVL_TRAY:
      return NodeKind::kNvlTray;
    case config::Hardware::MESH:
      return NodeKind::kMesh;
    default:
      return NodeKind::kHgx;
  }
}

LinkLayer link_layer(config::LinkLayer layer, LinkLayer fallback) {
  switch (layer) {
    case config::INFINIBAND:
      return LinkLayer::kInfiniband;
    case config::ETHERNET:
      return LinkLayer::kEthernet;
    default:
      return fallback;
  }
}

ScaleUpSpec scale_up_spec(const config::Hardware& hw, NodeKind kind) {
  const auto& up = hw.scale_up();
  require_positive(up.bytes_per_s(), "scale_up.bytes_per_s");
  require_efficiency(up.efficiency(), "scale_up.efficiency");
  require_non_negative(up.latency_s(), "scale_up.latency_s");
  ScaleUpSpec spec;
  const int gpus = hw.gpus_per_node();
  spec.domain_size = up.has_domain_size() ? up.domain_size() : gpus;
  require(spec.domain_size >= gpus && spec.domain_size % gpus == 0, "scale_up.domain_size",
          spec.domain_size, fmt::format("a multiple of gpus_per_node ({})", gpus));
  spec.latency_s = up.latency_s();
  spec.port_bytes_per_s = up.bytes_per_s() * up.efficiency();
  spec.nvls = up.nvls() && kind != NodeKind::kMesh;
  const double nvls_efficiency = up.has_nvls_efficiency() ? up.nvls_efficiency() : up.efficiency();
  require_efficiency(nvls_efficiency, "scale_up.nvls_efficiency");
  spec.nvls_bytes_per_s = up.bytes_per_s() * nvls_efficiency;
  if (kind == NodeKind::kMesh) {
    require(spec.domain_size == gpus, "scale_up.domain_size", spec.domain_size,
            fmt::format("gpus_per_node ({}): a mesh does not reach past its node", gpus));
    const double link = up.has_mesh_link_bytes_per_s() ? up.mesh_link_bytes_per_s()
                                                       : up.bytes_per_s() / std::max(gpus - 1, 1);
    require_positive(link, "scale_up.mesh_link_bytes_per_s");
    const double aggregate = up.has_aggregate_efficiency() ? up.aggregate_efficiency() : 1.0;
    require_efficiency(aggregate, "scale_up.aggregate_efficiency");
    spec.mesh_link_bytes_per_s = link * up.efficiency();
    spec.port_bytes_per_s = up.bytes_per_s() * aggregate;
  }
  return spec;
}

void fill_host(const config::Hardware& hw, NodeSpec& node) {
  const auto& pcie = hw.pcie();
  const auto& host = hw.host();
  node.has_host = pcie.bytes_per_s() > 0;
  if (!node.has_host) return;
  require_positive(pcie.bytes_per_s(), "pcie.bytes_per_s");
  require_efficiency(pcie.efficiency(), "pcie.efficiency");
  require_non_negative(pcie.latency_s(), "pcie.latency_s");
  node.pcie_bytes_per_s = pcie.bytes_per_s() * pcie.efficiency();
  node.pcie_latency_s = pcie.latency_s();
  node.sockets = host.has_sockets() ? host.sockets() : 1;
  require(node.sockets >= 1 && node.gpus % node.sockets == 0, "host.sockets", node.sockets,
          fmt::format("at least 1 socket, dividing gpus_per_node ({})", node.gpus));
  node.memory_bytes = host.memory_bytes();
  if (node.sockets > 1) {
    require_positive(host.inter_socket_bytes_per_s(), "host.inter_socket_bytes_per_s");
    require_non_negative(host.inter_socket_latency_s(), "host.inter_socket_latency_s");
    node.inter_socket_bytes_per_s = host.inter_socket_bytes_per_s() * pcie.efficiency();
    node.inter_socket_latency_s = host.inter_socket_latency_s();
  }
  if (node.kind == NodeKind::kNvlTray) {
    node.pcie_switches_per_socket = 0;
    require_positive(host.c2c_bytes_per_s(), "host.c2c_bytes_per_s");
    require_non_negative(host.c2c_latency_s(), "host.c2c_latency_s");
    node.c2c_bytes_per_s = host.c2c_bytes_per_s() * pcie.efficiency();
    node.c2c_latency_s = host.c2c_latency_s();
  } else {
    node.pcie_switches_per_socket =
        host.has_pcie_switches_per_socket() ? host.pcie_switches_per_socket() : 1;
    require(node.pcie_switches_per_socket >= 1, "host.pcie_switches_per_socket",
            node.pcie_switches_per_socket, "at least 1");
  }
}

// NIC ports: every port at the scale-out defaults, then the listed exceptions in order.
void fill_ports(const config::Hardware& hw, NodeSpec& node) {
  const auto& so = hw.scale_out();
  if (hw.nodes() > 1) {  // servers reach each other only through their NICs
    require_positive(hw.pcie().bytes_per_s(), "pcie.bytes_per_s");
    require(so.nics_per_gpu() >= 1, "scale_out.nics_per_gpu", so.nics_per_gpu(),
            "at least 1 NIC per GPU when there is more than one node");
    require_positive(so.nic_bits_per_s(), "scale_out.nic_bits_per_s");
  }
  // One node builds its NICs too when their figures are there (`racksim topo` shows them).
  if (!node.has_host || so.nics_per_gpu() < 1 || !(so.nic_bits_per_s() > 0)) return;
  node.nics_per_gpu = so.nics_per_gpu();
  const LinkLayer fallback = link_layer(so.link_layer(), LinkLayer::kInfiniband);
  node.ports.assign(static_cast<size_t>(node.gpus) * node.nics_per_gpu,
                    PortSpec{fallback, so.nic_bits_per_s()});
  for (const auto& port : so.ports()) {
    require(port.index() >= 0 && port.index() < static_cast<int>(node.ports.size()),
            "scale_out.ports.index", port.index(),
            fmt::format("a port of the node, 0 .. {}", node.ports.size() - 1));
    PortSpec& spec = node.ports[port.index()];
    spec.link_layer = link_layer(port.link_layer(), spec.link_layer);
    if (port.has_bits_per_s()) {
      require_positive(port.bits_per_s(), "scale_out.ports.bits_per_s");
      spec.bits_per_s = port.bits_per_s();
    }
  }
}

FabricSpec fabric_spec(const config::Hardware& hw) {
  const auto& so = hw.scale_out();
  FabricSpec f;
  f.tiers = so.has_tiers() ? so.tiers() : 2;
  f.nodes_per_unit = so.nodes_per_leaf();
  f.spines = so.spines();
  f.oversubscription = so.oversubscription();
  f.units_per_pod = so.units_per_pod();
  f.cores = so.cores();
  f.pod_oversubscription = so.has_pod_oversubscription() ? so.pod_oversubscription() : 1.0;
  f.switch_radix = so.switch_radix();
  f.nic_latency_s = so.nic_latency_s();
  f.switch_latency_s = so.switch_latency_s();
  f.infiniband_efficiency = so.efficiency();
  f.ethernet_efficiency = so.has_ethernet_efficiency() ? so.ethernet_efficiency() : so.efficiency();
  return f;
}

// Only what the built fabric uses is checked: one node has no scale-out network.
void check_fabric(const ClusterSpec& spec) {
  const FabricSpec& f = spec.fabric;
  require(f.tiers == 2 || f.tiers == 3, "scale_out.tiers", f.tiers, "2 or 3");
  require(f.nodes_per_unit >= 1, "scale_out.nodes_per_leaf", f.nodes_per_unit,
          "at least 1 node per leaf");
  require_efficiency(f.infiniband_efficiency, "scale_out.efficiency");
  require_efficiency(f.ethernet_efficiency, "scale_out.ethernet_efficiency");
  require_non_negative(f.nic_latency_s, "scale_out.nic_latency_s");
  require(f.switch_radix >= 0, "scale_out.switch_radix", f.switch_radix, "a port count >= 0");
  if (spec.units() * spec.nics_per_node() > 1) {  // the leaves must be joined by spines
    require(f.spines >= 1, "scale_out.spines", f.spines,
            "at least 1 spine when there is more than one leaf");
    require_positive(f.oversubscription, "scale_out.oversubscription");
    require_non_negative(f.switch_latency_s, "scale_out.switch_latency_s");
  }
  if (f.tiers == 3) {
    require(f.units_per_pod >= 1, "scale_out.units_per_pod", f.units_per_pod,
            "at least 1 scalable unit per pod with 3 tiers");
    if (spec.pods() > 1) {
      require(f.cores >= 1, "scale_out.cores", f.cores, "at least 1 core with several pods");
      require_positive(f.pod_oversubscription, "scale_out.pod_oversubscription");
    }
  }
}

}  // namespace

int ClusterSpec::pods() const {
  if (fabric.tiers != 3 || fabric.units_per_pod < 1) return 1;
  return (units() + fabric.units_per_pod - 1) / fabric.units_per_pod;
}

double ClusterSpec::port_bytes_per_s(const PortSpec& port) const {
  const double efficiency = port.link_layer == LinkLayer::kEthernet ? fabric.ethernet_efficiency
                                                                    : fabric.infiniband_efficiency;
  return port.bits_per_s / 8 * efficiency;
}

ClusterSpec cluster_spec(const config::Hardware& hw) {
  require(hw.nodes() >= 1, "nodes", hw.nodes(), "at least 1 node");
  require(hw.gpus_per_node() >= 1, "gpus_per_node", hw.gpus_per_node(), "at least 1 GPU");
  ClusterSpec spec;
  spec.nodes = hw.nodes();
  spec.node.kind = node_kind(hw.node_kind());
  spec.node.gpus = hw.gpus_per_node();
  spec.scale_up = scale_up_spec(hw, spec.node.kind);
  fill_host(hw, spec.node);
  fill_ports(hw, spec.node);
  spec.fabric = fabric_spec(hw);
  spec.treat_all_nics_as_ib = hw.scale_out().treat_all_nics_as_ib();
  spec.pxn = hw.collectives().pxn();
  if (spec.nodes > 1) check_fabric(spec);
  return spec;
}

std::string_view to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::kHgx:
      return "hgx";
    case NodeKind::kNvlTray:
      return "nvl_tray";
    case NodeKind::kMesh:
      return "mesh";
  }
  return "unknown";
}

std::string_view to_string(LinkLayer layer) {
  switch (layer) {
    case LinkLayer::kNone:
      return "none";
    case LinkLayer::kInfiniband:
      return "infiniband";
    case LinkLayer::kEthernet:
      return "ethernet";
  }
  return "unknown";
}

}  // namespace racksim::topo
