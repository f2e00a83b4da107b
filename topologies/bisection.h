// Bisection bandwidth: by formula, and by max-flow on the graph, for the whole cluster's
// scale-out fabric or for any block of it (bisection_tiers.h reports one per tier).
#pragma once

#include <cstdint>

#include "topologies/topology_graph.h"

namespace racksim::topo {

// Which links a cut goes through.
enum class CutNetwork : uint8_t {
  kScaleUp,   // NVLink (GPU <-> scale-up switch) or a mesh's xGMI links; members are GPUs
  kScaleOut,  // InfiniBand NIC links and fabric switches; members are nodes
};

// A block of consecutive members, [first, first + count), cut into its first count / 2 members
// against the next count / 2 (an odd last one stays out).
struct BisectionCut {
  CutNetwork network = CutNetwork::kScaleOut;
  int first = 0;
  int count = 0;
};

// Cutting `block_nodes` nodes (from a unit boundary) into halves aligned with scalable units
// and pods, per direction:
//   (block_nodes / 2) x (sum of a node's InfiniBand port rates) / (o_leaf x o_pod)
// where o_leaf counts when the halves are in different units (the block is larger than a unit:
// their traffic climbs to the spines) and o_pod when they are in different pods (it climbs to
// the cores). Inside one unit every rail's leaf joins both halves directly.
double scale_out_bisection_formula_bytes_per_s(const ClusterSpec& spec, int block_nodes);

// The whole cluster's nodes cut into halves: the formula above with spec.nodes.
double bisection_formula_bytes_per_s(const ClusterSpec& spec);

// The maximum flow from the first half of `cut` to the second, through the cut's network only
// (each link carries its bandwidth in each direction). Exact for any cut; O(V E) at worst, meant
// for up to a few thousand GPUs.
double bisection_max_flow_bytes_per_s(const Topology& topology, const BisectionCut& cut);

// The whole cluster's nodes cut into halves over the scale-out fabric.
double bisection_max_flow_bytes_per_s(const Topology& topology);

}  // namespace racksim::topo
