#include "topologies/fabric_search.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace racksim::topo {
namespace {

// Cached searches are dropped all together past this many bytes: at 4,096 nodes a search
// takes up to a few MB, and one per NIC would need gigabytes. Routes are cached by the Router,
// so a dropped search only costs a new one when a new pair with that end shows up.
constexpr size_t kMaxSearchCacheBytes = size_t{128} << 20;

constexpr int32_t kNoPath = std::numeric_limits<int32_t>::max();

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

uint64_t pair_key(VertexId src, VertexId dst) {
  return (static_cast<uint64_t>(src) << 32) | static_cast<uint64_t>(dst);
}

// Walks one shortest route from src to dst, given the two searches and the route's length.
//
// The k-th vertex of a shortest route has dist_src = k and dist_dst = length - k. Past `split`
// the search from dst knows every dist_dst needed; before it, a vertex is on a shortest route
// if the search from src puts it at k and one of its neighbours is on one at k + 1 (memoized).
class RouteWalk {
 public:
  RouteWalk(const Topology& topology, const std::vector<int32_t>& from_src,
            const std::vector<int32_t>& from_dst, VertexId src, VertexId dst, int32_t length,
            int32_t split)
      : topology_(topology),
        from_src_(from_src),
        from_dst_(from_dst),
        src_(src),
        dst_(dst),
        length_(length),
        split_(split) {}

  // Among the equal-cost next hops (sorted by vertex, so the order does not depend on edge
  // insertion), a hash of the pair and the hop number picks one: the same pair always takes
  // the same path, and different pairs spread over the spines.
  std::vector<Hop> walk() {
    const Graph& g = topology_.graph;
    const uint64_t pair_hash = splitmix64(pair_key(src_, dst_));
    std::vector<Hop> hops;
    hops.reserve(length_);
    std::vector<std::pair<VertexId, uint32_t>> candidates;  // (next vertex, edge index)
    VertexId current = src_;
    for (int32_t k = 0; k < length_; ++k) {
      candidates.clear();
      for (auto [it, end] = boost::out_edges(current, g); it != end; ++it) {
        if (on_route(boost::target(*it, g), k + 1)) {
          candidates.emplace_back(boost::target(*it, g), g[*it].index);
        }
      }
      if (candidates.empty()) {  // cannot happen with consistent searches; never loop forever
        throw std::logic_error(fmt::format("routing from {} to {} is stuck at {}", g[src_].name,
                                           g[dst_].name, g[current].name));
      }
      std::sort(candidates.begin(), candidates.end());
      const auto [next, edge] = candidates[splitmix64(pair_hash + k) % candidates.size()];
      // The stored descriptor keeps the orientation given at creation: source(e) -> target(e).
      hops.push_back(Hop{edge, boost::source(topology_.edges[edge], g) == current});
      current = next;
    }
    return hops;
  }

 private:
  // Whether `v` can be the k-th vertex (k >= 1) of a shortest route.
  bool on_route(VertexId v, int32_t k) {
    if (v != dst_ && !is_fabric_switch(topology_.graph[v].kind)) return false;
    if (k >= split_) return from_dst_[v] == length_ - k;
    if (from_src_[v] != k) return false;
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    bool leads_on = false;
    for (auto [it, end] = boost::adjacent_vertices(v, topology_.graph); it != end && !leads_on;
         ++it) {
      leads_on = on_route(*it, k + 1);
    }
    return memo_[v] = leads_on;
  }

  const Topology& topology_;
  const std::vector<int32_t>& from_src_;
  const std::vector<int32_t>& from_dst_;
  VertexId src_, dst_;
  int32_t length_, split_;
  std::unordered_map<VertexId, bool> memo_;
};

}  // namespace

bool is_fabric_switch(VertexKind kind) {
  return kind == VertexKind::kLeaf || kind == VertexKind::kSpine || kind == VertexKind::kCore;
}

FabricSearch::Search& FabricSearch::search_from(VertexId root) {
  if (auto it = searches_.find(root); it != searches_.end()) return it->second;
  Search search;
  search.root = root;
  search.dist.assign(boost::num_vertices(topology_.graph), -1);
  search.dist[root] = 0;
  search.queue.push_back(root);
  return searches_.emplace(root, std::move(search)).first->second;
}

void FabricSearch::grow(Search& search) const {
  const Graph& g = topology_.graph;
  // Only switches (and the root) are expanded, so a distance means a path through the fabric.
  while (search.head < search.queue.size() &&
         search.dist[search.queue[search.head]] == search.depth) {
    const VertexId v = search.queue[search.head++];
    if (v != search.root && !is_fabric_switch(g[v].kind)) continue;
    for (auto [it, end] = boost::adjacent_vertices(v, g); it != end; ++it) {
      if (search.dist[*it] < 0) {
        search.dist[*it] = search.depth + 1;
        search.queue.push_back(*it);
      }
    }
  }
  ++search.depth;
  search.exhausted = search.head == search.queue.size();
}

int32_t FabricSearch::shortest_length(Search& from_src, Search& from_dst) {
  const Graph& g = topology_.graph;
  for (;;) {
    // A vertex reached by both searches joins them if traffic may pass it.
    const Search& fewer = from_src.queue.size() <= from_dst.queue.size() ? from_src : from_dst;
    const Search& other = &fewer == &from_src ? from_dst : from_src;
    int32_t best = kNoPath;
    for (VertexId v : fewer.queue) {
      const bool may_pass = v == from_src.root || v == from_dst.root || is_fabric_switch(g[v].kind);
      if (may_pass && other.dist[v] >= 0) best = std::min(best, fewer.dist[v] + other.dist[v]);
    }
    // Every path of up to depth_src + depth_dst hops has a vertex that both searches reached,
    // so no shorter path is left to find. An exhausted search has found all it could.
    const bool done = from_src.exhausted || from_dst.exhausted;
    if (best != kNoPath && (done || best <= from_src.depth + from_dst.depth)) return best;
    if (done) return kNoPath;
    // Grow the side with the smaller frontier.
    grow(from_src.queue.size() - from_src.head <= from_dst.queue.size() - from_dst.head ? from_src
                                                                                        : from_dst);
  }
}

std::vector<Hop> FabricSearch::route(VertexId src, VertexId dst) {
  if (src == dst) return {};
  const Graph& g = topology_.graph;
  const size_t search_bytes = boost::num_vertices(g) * (sizeof(int32_t) + sizeof(VertexId));
  if ((searches_.size() + 2) * search_bytes > kMaxSearchCacheBytes) searches_.clear();
  Search& from_src = search_from(src);  // references into the map stay valid on insertion
  Search& from_dst = search_from(dst);

  const int32_t length = shortest_length(from_src, from_dst);
  if (length == kNoPath) {
    throw std::runtime_error(fmt::format("no route from {} to {} through the scale-out network",
                                         g[src].name, g[dst].name));
  }
  // Positions from `split` on are within the dst search's depth; those before it are within
  // the src search's (length <= depth_src + depth_dst), unless a search is exhausted.
  const int32_t split = from_dst.exhausted ? 0 : std::max(0, length - from_dst.depth);
  return RouteWalk(topology_, from_src.dist, from_dst.dist, src, dst, length, split).walk();
}

}  // namespace racksim::topo
