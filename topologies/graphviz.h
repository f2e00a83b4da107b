// The cluster graph as Graphviz DOT (Boost.Graph's write_graphviz), for small topologies.
#pragma once

#include <ostream>

#include "topologies/topology_graph.h"

namespace racksim::topo {

// Vertices are labelled with their names and shaped by kind; edges with their class and
// bandwidth per direction (GB/s).
void write_dot(std::ostream& out, const Topology& topology);

}  // namespace racksim::topo
