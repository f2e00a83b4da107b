// Routes between endpoints of the topology graph.
//
// Routes are shortest paths in hops that never pass through an endpoint (a GPU or a CPU is a
// source or a destination, never a transit), with a deterministic ECMP choice among equal-cost
// next hops: the choice depends only on (source, destination), so runs are reproducible and
// different pairs spread over the spines. Routes are computed on demand and cached.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "topologies/topology_graph.h"

namespace racksim::topo {

class Router {
 public:
  explicit Router(const Topology& topology);

  // The hops from `src` to `dst` (vertices). Throws std::runtime_error if there is no path.
  // The reference stays valid for the Router's lifetime.
  const std::vector<Hop>& route(VertexId src, VertexId dst);

  // Sum of the hops' one-way latencies, and the smallest hop bandwidth.
  double latency_s(const std::vector<Hop>& hops) const;
  double bottleneck_bytes_per_s(const std::vector<Hop>& hops) const;

 private:
  // A breadth-first search from one destination through transit vertices, advanced only as far
  // as the queries so far needed (a large cluster has ~70k vertices; most routes need a few).
  struct Search {
    std::vector<int32_t> dist;    // hops to the destination; -1: not reached (yet)
    std::vector<VertexId> queue;  // visit order; entries before `head` are expanded
    size_t head = 0;
  };

  // Hop distances to `dst`, complete for every vertex closer to `dst` than `src` (-1 at `src`
  // if it cannot reach `dst`). Cached per destination.
  const std::vector<int32_t>& distances_to(VertexId dst, VertexId src);
  std::vector<Hop> compute_route(VertexId src, VertexId dst);

  const Topology& topology_;
  std::unordered_map<VertexId, Search> searches_;          // per destination
  std::unordered_map<uint64_t, std::vector<Hop>> routes_;  // key: src << 32 | dst
};

}  // namespace racksim::topo
