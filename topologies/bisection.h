// Bisection bandwidth of the scale-out fabric: by formula, and by max-flow on the graph.
#pragma once

#include "topologies/topology_graph.h"

namespace racksim::topo {

// Cutting the nodes into halves (the first nodes / 2 against the rest) aligned with scalable
// units and pods, per direction:
//   (nodes / 2) x (sum of a node's InfiniBand port rates) / (o_leaf x o_pod)
// where o_leaf counts when the halves are in different units (their traffic climbs to the
// spines) and o_pod when they are in different pods (it climbs to the cores). With one unit
// every rail's leaf joins both halves directly.
double bisection_formula_bytes_per_s(const ClusterSpec& spec);

// The maximum flow from the InfiniBand NICs of the first nodes / 2 nodes to those of the rest,
// through NIC links and switches only (each link carries its bandwidth in each direction).
// Exact for any cut; O(V E) at worst, meant for up to a few thousand GPUs.
double bisection_max_flow_bytes_per_s(const Topology& topology);

}  // namespace racksim::topo
