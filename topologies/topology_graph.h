// The cluster as a graph (Boost.Graph): GPUs, switches, NICs and the links between them.
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

namespace racksim::topo {

enum class VertexKind : uint8_t {
  kGpu,
  kNvSwitch,  // one node's NVLink switch fabric, modelled as one non-blocking crossbar
  kPcieSwitch,
  kCpu,  // a CPU socket (NUMA node) with its host memory
  kNic,
  kLeaf,  // scale-out switches by tier
  kSpine,
  kCore,
};

enum class LinkClass : uint8_t {
  kNvlink,       // GPU <-> NVSwitch port
  kPcie,         // GPU/NIC <-> PCIe switch or CPU
  kInfiniband,   // NIC <-> leaf, IB link layer
  kEthernet,     // NIC <-> leaf, Ethernet link layer (RoCE)
  kFabric,       // switch <-> switch inside the scale-out network
  kInterSocket,  // CPU <-> CPU (UPI / xGMI)
};

struct Vertex {
  VertexKind kind = VertexKind::kGpu;
  std::string name;    // unique, e.g. "n3.gpu5", "rail5.leaf0", "spine2"
  int32_t node = -1;   // server index, or -1 for fabric switches
  int32_t index = -1;  // GPU/NIC index within its node; rail of a leaf; index of a switch
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
  int nodes = 0;
  int gpus_per_node = 0;

  int node_of_gpu(uint32_t gpu) const { return static_cast<int>(gpu) / gpus_per_node; }
  size_t num_gpus() const { return gpus.size(); }

 private:
  void reindex_edges();  // edges[i] = the edge of `graph` whose Edge::index is i
};

// One step of a route: an edge and the direction it is crossed in.
struct Hop {
  uint32_t edge = 0;    // Edge::index
  bool forward = true;  // source(e) -> target(e)
};

// Builds the cluster described by a resolved Hardware section (all fields set):
// hw.nodes() servers of hw.gpus_per_node() GPUs; in each server one NVSwitch vertex linked to
// every GPU (bandwidth scale_up.bytes_per_s x efficiency, latency scale_up.latency_s / 2 per
// side); scale_out.nics_per_gpu NICs per GPU, each behind the GPU's PCIe link
// (pcie.bytes_per_s, pcie.latency_s); a rail-optimized two-tier fabric: NIC k of every server
// of scalable unit u plugs into leaf (u, rail k), scale_out.nodes_per_leaf servers per unit;
// every leaf links to every one of scale_out.spines spines with an aggregated uplink of
// (nodes in unit x NIC rate) / (spines x oversubscription). No fabric is built for one node.
Topology build_cluster(const config::Hardware& hw);

std::string_view to_string(VertexKind kind);
std::string_view to_string(LinkClass link_class);

}  // namespace racksim::topo
