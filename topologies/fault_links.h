// Degraded-link faults (faults.h) applied to a built topology: the edge from a GPU's NIC to its
// leaf switch, or from the GPU to its scale-up switch (a mesh GPU's port block), runs at
// bandwidth_factor x its rate. Every fidelity reads edge rates from the graph (the SimGrid links,
// the analytic model's bottlenecks), so the what-if reaches all of them.
#pragma once

#include "topologies/faults.h"
#include "topologies/topology_graph.h"

namespace racksim::topo {

void degrade_links(Topology& topology, const Faults& faults);

}  // namespace racksim::topo
