// Which NICs each GPU sends through, chosen the way NCCL does it.
//
// NCCL ranks a GPU's NICs by PCIe distance (same switch, same socket, other socket) and spreads
// GPUs at equal distance over different NICs; it only uses ports of the network's link layer
// (InfiniBand, unless the node has no InfiniBand port). The what-if
// `treat_all_nics_as_ib` hands every port to NCCL as InfiniBand, as the seed cluster did: a GPU
// then takes its nearest port even if that port is Ethernet.
#pragma once

#include <algorithm>
#include <vector>

#include "topologies/topology_graph.h"

namespace racksim::topo {

// Fills Topology::attachment[g].nics (spec.node.nics_per_gpu per GPU) and .nic_order for the
// GPUs of `node`, whose NICs by port index are `nics`. Ports in `dead_ports` (a dead-NIC fault)
// are left out, as NCCL leaves out a port that is down: their GPUs take the next nearest.
void select_nics(Topology& topology, int node, const std::vector<VertexId>& nics,
                 const std::vector<int>& dead_ports = {});

// The link layer NCCL's InfiniBand transport runs on in a node with these ports. Inline so that
// the scenario checks (app/faults_validate) use it without linking the topology builders.
inline LinkLayer network_link_layer(const std::vector<PortSpec>& ports) {
  const bool any_ib = std::any_of(ports.begin(), ports.end(), [](const PortSpec& p) {
    return p.link_layer == LinkLayer::kInfiniband;
  });
  return any_ib ? LinkLayer::kInfiniband : LinkLayer::kEthernet;
}

}  // namespace racksim::topo
