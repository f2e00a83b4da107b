// The cluster as a graph (Boost.Graph): GPUs, switches, CPU sockets, NICs and the links
// between them.
//
// Every edge is a full-duplex link: `bytes_per_s` is the bandwidth of each direction, already
// multiplied by the link class's achievable efficiency (the platform uses it as is).
// Traversing edge e from source(e) to target(e) is the "forward" direction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "proto/scenario.pb.h"
#include "topologies/cluster_spec.h"
#include "topologies/faults.h"

namespace racksim::topo {

enum class VertexKind : uint8_t {
  kGpu,
  // A scale-up switch: one node's NVSwitches, or an NVL72 rack's NVLink switch trays, modelled
  // as one non-blocking crossbar per scale-up domain.
  kNvSwitch,
  kPcieSwitch,
  kCpu,  // a CPU socket (NUMA node) with its host memory
  kNic,
  kLeaf,  // scale-out switches by tier
  kSpine,
  kCore,
  // A mesh GPU's block of xGMI ports: its pairwise links leave from here, and the edge to its
  // GPU caps what all of them carry together.
  kMeshPort,
};

enum class LinkClass : uint8_t {
  kNvlink,       // GPU <-> scale-up switch, or a mesh GPU's port block and its pairwise links
  kPcie,         // GPU/NIC <-> PCIe switch or CPU
  kInfiniband,   // NIC <-> leaf, IB link layer
  kEthernet,     // NIC <-> leaf, Ethernet link layer (RoCE)
  kFabric,       // switch <-> switch inside the scale-out network
  kInterSocket,  // CPU <-> CPU (UPI / xGMI)
  kC2c,          // GPU <-> Grace CPU (NVLink-C2C)
};

struct Vertex {
  VertexKind kind = VertexKind::kGpu;
  std::string name;     // unique, e.g. "n3.gpu5", "su0.rail5.leaf", "spine2"
  int32_t node = -1;    // server index, or -1 for switches outside servers
  int32_t index = -1;   // GPU/NIC/switch index within its node; rail of a leaf; switch number
  int16_t socket = -1;  // NUMA node within the server (GPUs, NICs, PCIe switches, CPUs)
  LinkLayer link_layer = LinkLayer::kNone;  // NICs and leaves
  double bits_per_s = 0;                    // NICs: line rate
};

struct Edge {
  double bytes_per_s = 0;  // per direction, after efficiency
  double latency_s = 0;    // one way
  LinkClass link_class = LinkClass::kNvlink;
  uint32_t index = 0;  // dense edge number, 0 .. num_edges-1, in creation order
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, Vertex, Edge>;
using VertexId = Graph::vertex_descriptor;
using EdgeId = Graph::edge_descriptor;

// Where a GPU attaches to its server: its NUMA node and the NICs NCCL would give it.
struct GpuAttachment {
  int32_t numa_node = -1;           // global CPU index (Topology::cpus) of its socket
  VertexId scale_up = 0;            // its scale-up switch, or its mesh port block
  std::vector<VertexId> nics;       // scale-out NICs, nearest first (nic_selection.h)
  std::vector<VertexId> nic_order;  // every NIC of its node, nearest first
};

struct Topology {
  // Boost 1.74's adjacency_list has no move constructor, and an EdgeId points into the graph's
  // own edge storage: after a plain copy (which is also what a move does) `edges` would point
  // into the source graph. These rebuild `edges` for the new graph (O(V + E)).
  Topology() = default;
  Topology(const Topology& other);
  Topology& operator=(const Topology& other);
  ~Topology() = default;

  Graph graph;
  std::vector<VertexId> gpus;  // global GPU index -> vertex; GPU g of node n is n*gpus_per_node+g
  std::vector<EdgeId> edges;   // edge index -> edge
  std::vector<VertexId> cpus;  // global NUMA node -> vertex; socket s of node n is n*sockets+s
  std::vector<GpuAttachment> attachment;  // per global GPU
  ClusterSpec spec;                       // what was built
  int nodes = 0;
  int gpus_per_node = 0;

  int node_of_gpu(uint32_t gpu) const { return static_cast<int>(gpu) / gpus_per_node; }
  // The NVLink (or mesh) domain of a GPU: GPUs of one domain talk over scale-up links, others
  // over NICs. For an NVL72 rack the domain is the rack (72 GPUs), not the 4-GPU tray.
  int scale_up_domain_of_gpu(uint32_t gpu) const {
    return static_cast<int>(gpu) / spec.scale_up.domain_size;
  }
  int index_in_domain(uint32_t gpu) const {
    return static_cast<int>(gpu) % spec.scale_up.domain_size;
  }
  int sockets_per_node() const { return spec.node.has_host ? spec.node.sockets : 0; }
  size_t num_gpus() const { return gpus.size(); }

 private:
  void reindex_edges();  // edges[i] = the edge of `graph` whose Edge::index is i
};

// One step of a route: an edge and the direction it is crossed in.
struct Hop {
  uint32_t edge = 0;    // Edge::index
  bool forward = true;  // source(e) -> target(e)
};

// Builds the cluster described by a resolved Hardware section (all fields set): per node its
// GPUs, host side and NICs (node_builder.h), per scale-up domain one switch (or a mesh), the
// NCCL-style NIC choice of every GPU (nic_selection.h), and the scale-out networks
// (fabric_builder.h). Throws std::invalid_argument naming the field for unusable values.
// `faults` (validated): dead NICs are left out of the NIC choice, degraded ports built slower.
Topology build_cluster(const ClusterSpec& spec, const Faults& faults = {});
// The same for a hardware section not yet resolved (tools and tests): cluster_spec(hw) first.
Topology build_cluster(const config::Hardware& hw, const Faults& faults = {});

std::string_view to_string(VertexKind kind);
std::string_view to_string(LinkClass link_class);

}  // namespace racksim::topo
