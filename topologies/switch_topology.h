// N GPUs behind one switch: each GPU has one full-duplex link of the given bandwidth (per
// direction) and latency to a single non-blocking switch, the single-switch setup other
// simulators use for their examples (racksim replay --topology switch).
//
// The switch is a scale-up switch (an NVSwitch-like crossbar) and every GPU is in its one
// scale-up domain (node 0): collectives run rings in rank order, as on a server's NVSwitch,
// without in-switch reduction (NVLS) and without host side or NICs.
#pragma once

#include <cstdint>

#include "topologies/topology_graph.h"

namespace racksim::topo {

struct SwitchSpec {
  uint32_t gpus = 0;
  double link_bytes_per_s = 0;  // each GPU's link, per direction
  double link_latency_s = 0;    // GPU to switch, one way
};

// Throws std::invalid_argument for fewer than 1 GPU, a bandwidth that is not finite and > 0, or
// a latency that is not finite and >= 0.
Topology build_switch(const SwitchSpec& spec);

}  // namespace racksim::topo
