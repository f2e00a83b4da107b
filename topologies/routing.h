// Routes between endpoints of the topology graph (GPUs and CPU sockets).
//
// A route is put together the way the traffic actually moves:
//   - GPUs of one scale-up domain: over NVLink, GPU -> switch -> GPU (or, in a mesh, over the
//     pair's own link);
//   - GPUs of different domains: from the GPU to its NIC over PCIe (nic_selection.h), through
//     the scale-out fabric on a shortest path with a deterministic ECMP choice
//     (fabric_search.h), and from the far NIC to its GPU. With PXN
//     (hardware.collectives.pxn), traffic for another rail first crosses NVLink to the GPU of
//     the same node whose NIC is on the destination's rail, and leaves through that NIC;
//   - a GPU and a CPU socket of one server (host <-> device copies): over the GPU's PCIe path
//     (or NVLink-C2C) to its own socket, then over the inter-socket link for the other socket.
// Routes are computed on demand and cached, so a cluster never holds an all-pairs table.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "topologies/fabric_search.h"
#include "topologies/topology_graph.h"

namespace racksim::topo {

class Router {
 public:
  explicit Router(const Topology& topology);

  // The hops from `src` to `dst` (GPU or CPU vertices). Throws std::runtime_error if there is
  // no such route. The reference stays valid for the Router's lifetime.
  const std::vector<Hop>& route(VertexId src, VertexId dst);

  // Sum of the hops' one-way latencies, and the smallest hop bandwidth.
  double latency_s(const std::vector<Hop>& hops) const;
  double bottleneck_bytes_per_s(const std::vector<Hop>& hops) const;
  // Routes computed so far: only the pairs asked for, never an all-pairs table.
  size_t routes_computed() const { return routes_.size(); }

 private:
  std::vector<Hop> compute_route(VertexId src, VertexId dst);
  std::vector<Hop> scale_up_route(VertexId src, VertexId dst) const;
  std::vector<Hop> scale_out_route(VertexId src, VertexId dst);
  VertexId nic_for(VertexId gpu, uint64_t pair_hash) const;
  VertexId nearest_nic_of_layer(VertexId gpu, LinkLayer layer) const;
  VertexId pxn_proxy(VertexId src_gpu, int rail, LinkLayer layer) const;
  uint32_t gpu_index(VertexId gpu) const;
  int domain_of(VertexId gpu) const;

  const Topology& topology_;
  FabricSearch fabric_;
  std::unordered_map<uint64_t, std::vector<Hop>> routes_;  // key: src << 32 | dst
};

}  // namespace racksim::topo
