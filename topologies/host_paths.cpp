#include "topologies/host_paths.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

namespace racksim::topo {
namespace {

bool is_host_link(LinkClass c) {
  return c == LinkClass::kPcie || c == LinkClass::kC2c || c == LinkClass::kInterSocket;
}

bool forwards(VertexKind kind) {
  return kind == VertexKind::kPcieSwitch || kind == VertexKind::kCpu;
}

struct Reached {
  int hops = 0;
  VertexId parent = 0;
  uint32_t edge = 0;  // the edge from the parent
};

// Breadth-first search from `from` over host links; a server has a few dozen such vertices,
// so a map is cheaper than a vector over the whole cluster.
std::unordered_map<VertexId, Reached> search(const Topology& t, VertexId from) {
  std::unordered_map<VertexId, Reached> reached{{from, Reached{}}};
  std::vector<VertexId> queue{from};
  for (size_t head = 0; head < queue.size(); ++head) {
    const VertexId v = queue[head];
    if (v != from && !forwards(t.graph[v].kind)) continue;
    for (auto [it, end] = boost::out_edges(v, t.graph); it != end; ++it) {
      const Edge& e = t.graph[*it];
      const VertexId next = boost::target(*it, t.graph);
      if (!is_host_link(e.link_class) || reached.contains(next)) continue;
      reached[next] = Reached{reached[v].hops + 1, v, e.index};
      queue.push_back(next);
    }
  }
  return reached;
}

}  // namespace

std::vector<std::pair<VertexId, int>> host_distances(const Topology& topology, VertexId from) {
  std::vector<std::pair<VertexId, int>> out;
  for (const auto& [v, r] : search(topology, from)) out.emplace_back(v, r.hops);
  std::sort(out.begin(), out.end());  // the map's order is not deterministic
  return out;
}

std::vector<Hop> host_path(const Topology& topology, VertexId from, VertexId to) {
  const auto reached = search(topology, from);
  auto it = reached.find(to);
  if (it == reached.end()) {
    throw std::runtime_error(fmt::format("no PCIe/C2C path from {} to {} inside the server",
                                         topology.graph[from].name, topology.graph[to].name));
  }
  std::vector<Hop> hops;
  for (VertexId v = to; v != from; v = reached.at(v).parent) {
    const Reached& r = reached.at(v);
    hops.push_back(Hop{r.edge, boost::source(topology.edges[r.edge], topology.graph) == r.parent});
  }
  std::reverse(hops.begin(), hops.end());
  return hops;
}

Hop hop_between(const Topology& topology, VertexId from, VertexId to) {
  const auto [e, found] = boost::edge(from, to, topology.graph);
  if (!found) {
    throw std::logic_error(fmt::format("{} and {} are not linked", topology.graph[from].name,
                                       topology.graph[to].name));
  }
  const uint32_t index = topology.graph[e].index;
  return Hop{index, boost::source(topology.edges[index], topology.graph) == from};
}

std::vector<Hop> reversed(std::vector<Hop> hops) {
  std::reverse(hops.begin(), hops.end());
  for (Hop& hop : hops) hop.forward = !hop.forward;
  return hops;
}

}  // namespace racksim::topo
