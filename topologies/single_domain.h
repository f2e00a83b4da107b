// What the replay's small topologies share (a ring of GPUs, GPUs behind one switch): equal
// links of a checked bandwidth and latency, and every GPU in one scale-up domain (node 0)
// without host side or NICs.
#pragma once

#include <cstdint>
#include <string_view>

#include "topologies/topology_graph.h"

namespace racksim::topo {

// A topology of `gpus` GPUs in one scale-up domain of `link_bytes_per_s` ports, with no
// vertices yet. Throws std::invalid_argument naming `what` ("ring", "switch") for fewer than 1
// GPU, a bandwidth that is not finite and > 0, or a latency that is not finite and >= 0.
Topology single_domain(std::string_view what, uint32_t gpus, double link_bytes_per_s,
                       double link_latency_s);

}  // namespace racksim::topo
