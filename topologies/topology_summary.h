// What `racksim topo` reports about a cluster: counts, per-GPU bandwidths, the fabric's tiers
// and bisection, which NIC each GPU uses (and with the NIC what-if), and warnings.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "proto/scenario.pb.h"
#include "topologies/bisection_tiers.h"
#include "topologies/topology_graph.h"

namespace racksim::topo {

// One switch tier of the scale-out fabric: the links that climb out of it.
struct TierSummary {
  std::string name;        // "nic -> leaf", "leaf -> spine", "spine -> core", "ethernet"
  int links = 0;           // graph edges (leaf -> spine edges are aggregated bundles)
  double bytes_per_s = 0;  // all of them together, per direction
  double oversubscription = 1;
};

// The NIC a GPU of the first node sends through, as NCCL picks it.
struct NicChoice {
  int gpu = 0;  // index in the node
  int socket = 0;
  std::string nic;  // "n0.nic2"
  LinkLayer link_layer = LinkLayer::kNone;
  double bits_per_s = 0;
  int nic_socket = 0;
  int sharing_gpus = 1;  // GPUs of the node that send through this NIC
};

struct TopologySummary {
  std::string node_kind;
  int nodes = 0;
  int gpus = 0;
  int gpus_per_node = 0;
  int scale_up_domain = 0;  // GPUs per NVLink (or mesh) domain
  int scale_up_domains = 0;
  std::map<std::string, int> counts;  // vertices per kind
  // Per GPU, per direction, after efficiency.
  double scale_up_bytes_per_s = 0;   // NVLink port (mesh: what all links carry together)
  double mesh_link_bytes_per_s = 0;  // mesh only: one pair's link
  double nvls_bytes_per_s = 0;       // 0 without NVLS
  double nic_bytes_per_s = 0;        // the GPU's share of its NICs (node average)
  double pcie_bytes_per_s = 0;       // GPU <-> PCIe switch (NVL trays: C2C to the Grace)
  int sockets = 0;
  double host_memory_bytes = 0;  // per socket
  std::vector<TierSummary> tiers;
  double bisection_bytes_per_s = 0;            // formula (bisection.h)
  double bisection_max_flow_bytes_per_s = -1;  // on the graph, when small enough (< 0: skipped)
  std::vector<TierBisection> bisection_tiers;  // scale-up domain, unit, pod, cluster
  std::vector<NicChoice> nics;                 // per GPU of node 0
  std::vector<NicChoice> nics_what_if;  // with treat_all_nics_as_ib flipped (mixed ports only)
  // Bound of a ring all-reduce across nodes, per node (busbw): every channel leaves on its GPU's
  // NIC, so the most loaded NIC paces all of them: GPUs x min over NICs (rate / channels).
  double ring_scale_out_bytes_per_s = 0;
  double ring_scale_out_what_if_bytes_per_s = 0;  // with the flag flipped (mixed ports only)
  std::vector<std::string> warnings;
};

// Summarizes `topology`, built from `hw`. Computes the max-flow bisection for clusters of up
// to `max_flow_gpus` GPUs.
TopologySummary summarize(const Topology& topology, const config::Hardware& hw,
                          int max_flow_gpus = 4096);

}  // namespace racksim::topo
