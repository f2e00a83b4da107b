// Which NICs each GPU sends through, chosen the way NCCL does it.
//
// NCCL ranks a GPU's NICs by PCIe distance (same switch, same socket, other socket) and spreads
// GPUs at equal distance over different NICs; it only uses ports of the network's link layer
// (InfiniBand, unless the node has no InfiniBand port). The what-if
// `treat_all_nics_as_ib` hands every port to NCCL as InfiniBand, as the seed cluster did: a GPU
// then takes its nearest port even if that port is Ethernet.
#pragma once

#include "topologies/topology_graph.h"

namespace racksim::topo {

// Fills Topology::attachment[g].nics (spec.node.nics_per_gpu per GPU) and .nic_order for the
// GPUs of `node`, whose NICs by port index are `nics`.
void select_nics(Topology& topology, int node, const std::vector<VertexId>& nics);

// The link layer NCCL's InfiniBand transport runs on in a node with these ports.
LinkLayer network_link_layer(const std::vector<PortSpec>& ports);

}  // namespace racksim::topo
