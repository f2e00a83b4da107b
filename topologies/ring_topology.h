// A ring of GPUs, the topology of ASTRA-sim's "Ring" network: GPU i is linked to GPU i+1
// (mod n) by one full-duplex link of the given bandwidth (per direction) and latency.
//
// Each GPU reaches its two ring links through a port vertex (a NIC, joined to the GPU by a
// link that is never the bottleneck: 1 PB/s, no latency), so traffic to a GPU that is not a
// neighbour is routed around the ring through the other GPUs' ports, the shorter way, as a
// bidirectional ring forwards it. Every GPU is in one scale-up domain (node 0), so collectives
// run one ring in rank order, the ring the links form.
#pragma once

#include <cstdint>

#include "topologies/topology_graph.h"

namespace racksim::topo {

struct RingSpec {
  uint32_t gpus = 0;
  double link_bytes_per_s = 0;  // per direction
  double link_latency_s = 0;    // one way
};

// Throws std::invalid_argument for fewer than 1 GPU, a bandwidth that is not finite and > 0, or
// a latency that is not finite and >= 0.
Topology build_ring(const RingSpec& spec);

}  // namespace racksim::topo
