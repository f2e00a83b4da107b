// A resolved, checked description of the cluster to build: the scenario's hardware section
// with its defaults applied and its efficiencies folded into the rates.
//
// Builders read this instead of the protobuf, so that every default and every unit conversion
// lives in one place (cluster_spec.cpp). Rates are bytes/s per direction after efficiency;
// NIC line rates stay in bits/s as written.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "proto/scenario.pb.h"

namespace racksim::topo {

enum class NodeKind : uint8_t { kHgx, kNvlTray, kMesh };
enum class LinkLayer : uint8_t { kNone, kInfiniband, kEthernet };

struct PortSpec {
  LinkLayer link_layer = LinkLayer::kInfiniband;
  double bits_per_s = 0;  // line rate
};

struct NodeSpec {
  NodeKind kind = NodeKind::kHgx;
  int gpus = 8;
  int sockets = 1;
  int pcie_switches_per_socket = 1;  // HGX and MESH; 0 for NVL_TRAY (GPUs hang off C2C)
  bool has_host = false;             // CPUs and PCIe built (pcie.bytes_per_s set)
  double pcie_bytes_per_s = 0;
  double pcie_latency_s = 0;  // per PCIe link
  double inter_socket_bytes_per_s = 0;
  double inter_socket_latency_s = 0;
  double c2c_bytes_per_s = 0;
  double c2c_latency_s = 0;
  double memory_bytes = 0;  // per socket
  int nics_per_gpu = 0;
  std::vector<PortSpec> ports;  // NIC k of the node; empty: no NICs
};

struct ScaleUpSpec {
  int domain_size = 8;
  double port_bytes_per_s = 0;  // GPU <-> switch, or a mesh GPU's port block (its cap)
  double latency_s = 0;         // GPU -> GPU
  bool nvls = false;
  double nvls_bytes_per_s = 0;       // per port during NVLS all-reduce
  double mesh_link_bytes_per_s = 0;  // MESH: one pairwise link
};

struct FabricSpec {
  int tiers = 2;
  int nodes_per_unit = 32;  // one leaf per rail per scalable unit
  int spines = 4;           // per pod when tiers = 3
  double oversubscription = 1;
  int units_per_pod = 0;  // tiers = 3
  int cores = 0;          // tiers = 3
  double pod_oversubscription = 1;
  int switch_radix = 0;
  double nic_latency_s = 0;
  double switch_latency_s = 0;
  double infiniband_efficiency = 1;
  double ethernet_efficiency = 1;
};

struct ClusterSpec {
  int nodes = 1;
  NodeSpec node;
  ScaleUpSpec scale_up;
  FabricSpec fabric;
  bool treat_all_nics_as_ib = false;  // the seed's misconfiguration, as a what-if
  bool pxn = false;

  int gpus() const { return nodes * node.gpus; }
  int nics_per_node() const { return static_cast<int>(node.ports.size()); }
  int domains() const { return (gpus() + scale_up.domain_size - 1) / scale_up.domain_size; }
  int units() const { return (nodes + fabric.nodes_per_unit - 1) / fabric.nodes_per_unit; }
  int pods() const;  // 1 unless tiers = 3
  // Achievable bytes/s of a port after its link layer's efficiency.
  double port_bytes_per_s(const PortSpec& port) const;
};

// Resolves and checks a hardware section (presets already merged). Throws
// std::invalid_argument naming the hardware field for values the builders cannot use.
ClusterSpec cluster_spec(const config::Hardware& hw);

std::string_view to_string(NodeKind kind);
std::string_view to_string(LinkLayer layer);

}  // namespace racksim::topo
