#include "topologies/routing.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "topologies/host_paths.h"

namespace racksim::topo {
namespace {

uint64_t pair_key(VertexId src, VertexId dst) {
  return (static_cast<uint64_t>(src) << 32) | static_cast<uint64_t>(dst);
}

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

void append(std::vector<Hop>& to, const std::vector<Hop>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

// A shortest path between two scale-up ports that are not linked directly (a ring of GPUs,
// ring_topology.h, forwards through the other GPUs' ports), through anything but GPUs and CPUs.
std::vector<Hop> port_path(const Topology& t, VertexId from, VertexId to) {
  std::unordered_map<VertexId, std::pair<VertexId, uint32_t>> parent{{from, {from, 0}}};
  std::vector<VertexId> queue{from};
  for (size_t head = 0; head < queue.size() && !parent.contains(to); ++head) {
    for (auto [it, end] = boost::out_edges(queue[head], t.graph); it != end; ++it) {
      const VertexId next = boost::target(*it, t.graph);
      const VertexKind kind = t.graph[next].kind;
      if (parent.contains(next) || kind == VertexKind::kGpu || kind == VertexKind::kCpu) continue;
      parent[next] = {queue[head], t.graph[*it].index};
      queue.push_back(next);
    }
  }
  if (!parent.contains(to)) {
    throw std::runtime_error(
        fmt::format("no scale-up path from {} to {}", t.graph[from].name, t.graph[to].name));
  }
  std::vector<Hop> hops;
  for (VertexId v = to; v != from; v = parent.at(v).first) {
    const auto [prev, edge] = parent.at(v);
    hops.push_back(Hop{edge, boost::source(t.edges[edge], t.graph) == prev});
  }
  std::reverse(hops.begin(), hops.end());
  return hops;
}

}  // namespace

Router::Router(const Topology& topology) : topology_(topology), fabric_(topology) {}

const std::vector<Hop>& Router::route(VertexId src, VertexId dst) {
  const uint64_t key = pair_key(src, dst);
  if (auto it = routes_.find(key); it != routes_.end()) return it->second;
  // routes_ is node-based, so the returned reference survives later insertions.
  return routes_.emplace(key, compute_route(src, dst)).first->second;
}

std::vector<Hop> Router::compute_route(VertexId src, VertexId dst) {
  if (src == dst) return {};
  const Vertex& a = topology_.graph[src];
  const Vertex& b = topology_.graph[dst];
  if (a.kind == VertexKind::kGpu && b.kind == VertexKind::kGpu) {
    return domain_of(src) == domain_of(dst) ? scale_up_route(src, dst) : scale_out_route(src, dst);
  }
  const bool host_side = (a.kind == VertexKind::kCpu || b.kind == VertexKind::kCpu) &&
                         (a.kind == VertexKind::kGpu || a.kind == VertexKind::kCpu) &&
                         (b.kind == VertexKind::kGpu || b.kind == VertexKind::kCpu);
  if (host_side && a.node == b.node) return host_path(topology_, src, dst);
  throw std::runtime_error(
      fmt::format("no route from {} to {}: routes join GPUs, or a GPU and "
                  "a CPU socket of its own server",
                  a.name, b.name));
}

uint32_t Router::gpu_index(VertexId gpu) const {
  const Vertex& v = topology_.graph[gpu];
  return static_cast<uint32_t>(v.node * topology_.gpus_per_node + v.index);
}

int Router::domain_of(VertexId gpu) const {
  return topology_.scale_up_domain_of_gpu(gpu_index(gpu));
}

std::vector<Hop> Router::scale_up_route(VertexId src, VertexId dst) const {
  const VertexId from = topology_.attachment[gpu_index(src)].scale_up;
  const VertexId to = topology_.attachment[gpu_index(dst)].scale_up;
  std::vector<Hop> hops{hop_between(topology_, src, from)};
  if (from != to) {
    if (boost::edge(from, to, topology_.graph).second) {
      hops.push_back(hop_between(topology_, from, to));  // a mesh's pairwise link
    } else {
      append(hops, port_path(topology_, from, to));
    }
  }
  hops.push_back(hop_between(topology_, to, dst));
  return hops;
}

// With several NICs per GPU, the pair picks one of them (ECMP over the GPU's NICs).
VertexId Router::nic_for(VertexId gpu, uint64_t pair_hash) const {
  const auto& nics = topology_.attachment[gpu_index(gpu)].nics;
  if (nics.empty()) {
    throw std::runtime_error(fmt::format("{} has no NIC to leave its scale-up domain through",
                                         topology_.graph[gpu].name));
  }
  return nics[pair_hash % nics.size()];
}

// A receiving GPU whose own NIC is on the other network receives through its nearest NIC on the
// sender's network (both ends of a connection must be on one network).
VertexId Router::nearest_nic_of_layer(VertexId gpu, LinkLayer layer) const {
  for (VertexId nic : topology_.attachment[gpu_index(gpu)].nic_order) {
    if (topology_.graph[nic].link_layer == layer) return nic;
  }
  throw std::runtime_error(fmt::format("{} has no {} NIC to receive from the other network",
                                       topology_.graph[gpu].name, to_string(layer)));
}

// The GPU of src's node that sends on `rail`, or src itself when there is none.
VertexId Router::pxn_proxy(VertexId src_gpu, int rail, LinkLayer layer) const {
  const uint32_t first = gpu_index(src_gpu) - topology_.graph[src_gpu].index;
  for (int g = 0; g < topology_.gpus_per_node; ++g) {
    for (VertexId nic : topology_.attachment[first + g].nics) {
      const Vertex& v = topology_.graph[nic];
      if (v.index == rail && v.link_layer == layer) return topology_.gpus[first + g];
    }
  }
  return src_gpu;
}

std::vector<Hop> Router::scale_out_route(VertexId src, VertexId dst) {
  const uint64_t hash = mix(pair_key(src, dst));
  VertexId src_nic = nic_for(src, hash);
  VertexId dst_nic = nic_for(dst, hash >> 16);
  const LinkLayer layer = topology_.graph[src_nic].link_layer;
  if (topology_.graph[dst_nic].link_layer != layer) dst_nic = nearest_nic_of_layer(dst, layer);

  std::vector<Hop> hops;
  VertexId sender = src;
  const int dst_rail = topology_.graph[dst_nic].index;
  if (topology_.spec.pxn && topology_.graph[src_nic].index != dst_rail) {
    const VertexId proxy = pxn_proxy(src, dst_rail, layer);
    if (proxy != src) {
      hops = scale_up_route(src, proxy);
      sender = proxy;
      for (VertexId nic : topology_.attachment[gpu_index(proxy)].nics) {
        if (topology_.graph[nic].index == dst_rail) src_nic = nic;
      }
    }
  }
  append(hops, host_path(topology_, sender, src_nic));
  append(hops, fabric_.route(src_nic, dst_nic));
  append(hops, reversed(host_path(topology_, dst, dst_nic)));
  return hops;
}

double Router::latency_s(const std::vector<Hop>& hops) const {
  double total = 0;
  for (const Hop& hop : hops) total += topology_.graph[topology_.edges[hop.edge]].latency_s;
  return total;
}

double Router::bottleneck_bytes_per_s(const std::vector<Hop>& hops) const {
  double bottleneck = std::numeric_limits<double>::infinity();  // an empty route limits nothing
  for (const Hop& hop : hops) {
    bottleneck = std::min(bottleneck, topology_.graph[topology_.edges[hop.edge]].bytes_per_s);
  }
  return bottleneck;
}

}  // namespace racksim::topo
