// Shortest routes between NICs through the scale-out switches (leaf, spine, core), with a
// deterministic ECMP choice among equal-cost next hops: the choice depends only on the pair of
// NICs, so runs are reproducible and different pairs spread over the spines.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "topologies/topology_graph.h"

namespace racksim::topo {

class FabricSearch {
 public:
  explicit FabricSearch(const Topology& topology) : topology_(topology) {}

  // The hops from NIC `src` to NIC `dst`. Throws std::runtime_error if no switch path joins them
  // (e.g. an InfiniBand port and an Ethernet port).
  std::vector<Hop> route(VertexId src, VertexId dst);

 private:
  // A breadth-first search from one root through switches, grown one layer at a time only as
  // far as the routes asked so far needed: most routes meet halfway, so a large cluster is
  // rarely searched whole. Hop distances are symmetric, so one search serves routes from and to
  // its root.
  struct Search {
    VertexId root = 0;
    std::vector<int32_t> dist;    // hops from the root; -1: not reached (yet)
    std::vector<VertexId> queue;  // visit order; entries before `head` are expanded
    size_t head = 0;
    int32_t depth = 0;       // every vertex within `depth` hops of the root has its distance
    bool exhausted = false;  // everything reachable has its distance
  };

  Search& search_from(VertexId root);
  void grow(Search& search) const;
  // Hops of the shortest route, growing the two searches until they provably meet.
  int32_t shortest_length(Search& from_src, Search& from_dst);

  const Topology& topology_;
  std::unordered_map<VertexId, Search> searches_;  // per root vertex
};

// Whether traffic may pass through a vertex of this kind on its way through the fabric.
bool is_fabric_switch(VertexKind kind);

}  // namespace racksim::topo
