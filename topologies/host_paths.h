// Paths inside one server over its host side: PCIe links and switches, NVLink-C2C, and the
// inter-socket link. CPUs and PCIe switches forward (PCIe peer-to-peer and GPUDirect RDMA cross
// the root complex); GPUs and NICs only start or end a path. NVLink is not part of it.
#pragma once

#include <utility>
#include <vector>

#include "topologies/topology_graph.h"

namespace racksim::topo {

// Hops of every vertex of `from`'s server reachable this way, by breadth-first search (the
// PCIe distance NCCL ranks NICs by: 2 = same switch, 4 = same socket, 5+ = other socket).
std::vector<std::pair<VertexId, int>> host_distances(const Topology& topology, VertexId from);

// A shortest such path from `from` to `to` (same server). Throws std::runtime_error if none.
std::vector<Hop> host_path(const Topology& topology, VertexId from, VertexId to);

// The hop that crosses the edge between two adjacent vertices. Throws if they are not adjacent.
Hop hop_between(const Topology& topology, VertexId from, VertexId to);

// The same hops walked backwards.
std::vector<Hop> reversed(std::vector<Hop> hops);

}  // namespace racksim::topo
