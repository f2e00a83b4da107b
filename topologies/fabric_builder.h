// The scale-out networks: a rail-optimized InfiniBand fat-tree of two or three tiers, and a
// separate Ethernet network for Ethernet ports.
//
// InfiniBand: NIC port k of every server of scalable unit u plugs into leaf (u, rail k), one
// leaf per rail per unit (scale_out.nodes_per_leaf servers). Two tiers: every leaf links to
// every spine. Three tiers: units_per_pod units form a pod with its own spines; every spine
// links to every core. Links between switches are aggregated, one edge per switch pair:
//   leaf -> spine: (nodes_per_leaf x port rate) / (spines x oversubscription)
//   spine -> core: (leaves of a full pod x leaf -> spine link) / (cores x pod_oversubscription)
// sized for full units and pods whether or not every server is present.
// Ethernet: every Ethernet port of unit u plugs into leaf "su<u>.eth.leaf"; several units
// are joined by `spines` Ethernet spines with the same oversubscription.
#pragma once

#include <vector>

#include "topologies/graph_builder.h"

namespace racksim::topo {

// `nics[node][port]`: the NIC vertices of every node. Builds nothing for a single node.
void build_fabric(GraphBuilder& builder, const ClusterSpec& spec,
                  const std::vector<std::vector<VertexId>>& nics);

}  // namespace racksim::topo
