// Builds one server of the cluster: its GPUs and how they reach their scale-up domain, its CPU
// sockets (NUMA nodes) with their PCIe switches or NVLink-C2C links, and its NIC ports.
#pragma once

#include <vector>

#include "topologies/graph_builder.h"

namespace racksim::topo {

// Node layouts (ClusterSpec::node.kind):
//   HGX, MESH: sockets joined by the inter-socket link; under each socket its PCIe switches;
//     GPU g on switch g x switches / GPUs and NIC k on switch k x switches / NICs, so GPU k and
//     NIC k share a switch (DGX H100: 2 switches per socket, each with 2 GPUs and 2 NICs).
//   NVL_TRAY: GPU g on Grace socket g x sockets / GPUs over NVLink-C2C; NIC k on the PCIe of
//     socket k x sockets / NICs (GPUDirect RDMA crosses the Grace, NCCL's P2C path).
// Scale-up: an HGX or NVL_TRAY GPU links to `scale_up_switch`; a MESH GPU to its own port
// block, and every pair of port blocks of the node is linked directly.
// Returns the node's NIC vertices by port index (empty when the node has no NICs).
std::vector<VertexId> build_node(GraphBuilder& builder, const ClusterSpec& spec, int node,
                                 VertexId scale_up_switch);

}  // namespace racksim::topo
