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
  // A breadth-first search from one root through transit vertices, grown one layer at a time
  // only as far as the routes asked so far needed: most routes meet halfway, so a large cluster
  // (~70k vertices at 4,096 nodes) is rarely searched whole. Hop distances are symmetric, so
  // one search serves routes from and to its root.
  struct Search {
    VertexId root = 0;
    std::vector<int32_t> dist;    // hops from the root; -1: not reached (yet)
    std::vector<VertexId> queue;  // visit order; entries before `head` are expanded
    size_t head = 0;
    int32_t depth = 0;       // every vertex within `depth` hops of the root has its distance
    bool exhausted = false;  // everything reachable has its distance
  };

  std::vector<Hop> compute_route(VertexId src, VertexId dst);
  Search& search_from(VertexId root);
  void grow(Search& search) const;
  // Hops of the shortest route, growing the two searches until they provably meet.
  int32_t shortest_length(Search& from_src, Search& from_dst);

  const Topology& topology_;
  std::unordered_map<VertexId, Search> searches_;          // per root vertex
  std::unordered_map<uint64_t, std::vector<Hop>> routes_;  // key: src << 32 | dst
};

}  // namespace racksim::topo
