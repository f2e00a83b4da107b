#include "topologies/nic_selection.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "topologies/host_paths.h"

namespace racksim::topo {
namespace {

constexpr int kUnreachable = std::numeric_limits<int>::max();

// PCIe distance from a GPU to each NIC of its node (by port index).
std::vector<int> distances_to(const Topology& t, VertexId gpu, const std::vector<VertexId>& nics) {
  std::vector<int> out(nics.size(), kUnreachable);
  for (const auto& [v, hops] : host_distances(t, gpu)) {
    const Vertex& vertex = t.graph[v];
    if (vertex.kind == VertexKind::kNic) out[vertex.index] = hops;
  }
  return out;
}

}  // namespace

void select_nics(Topology& t, int node, const std::vector<VertexId>& nics,
                 const std::vector<int>& dead_ports) {
  if (nics.empty()) return;
  const NodeSpec& spec = t.spec.node;
  const LinkLayer wanted = network_link_layer(spec.ports);
  std::vector<int> use(nics.size(), 0);
  for (int g = 0; g < spec.gpus; ++g) {
    const uint32_t gpu = static_cast<uint32_t>(node * spec.gpus + g);
    std::vector<int> distance = distances_to(t, t.gpus[gpu], nics);
    for (int port : dead_ports) {
      if (port >= 0 && port < static_cast<int>(distance.size())) distance[port] = kUnreachable;
    }
    GpuAttachment& a = t.attachment[gpu];
    std::vector<int> order(nics.size());
    for (size_t k = 0; k < nics.size(); ++k) order[k] = static_cast<int>(k);
    std::stable_sort(order.begin(), order.end(),
                     [&](int x, int y) { return distance[x] < distance[y]; });
    a.nic_order.clear();
    for (int k : order) {
      if (distance[k] != kUnreachable) a.nic_order.push_back(nics[k]);
    }
    // Greedy in GPU order: nearest first, then the least used, then the lowest index, so that
    // GPU k gets NIC k when they share a switch.
    for (int j = 0; j < spec.nics_per_gpu; ++j) {
      int best = -1;
      for (int k = 0; k < static_cast<int>(nics.size()); ++k) {
        const bool usable = t.spec.treat_all_nics_as_ib || spec.ports[k].link_layer == wanted;
        if (!usable || distance[k] == kUnreachable) continue;
        if (std::find(a.nics.begin(), a.nics.end(), nics[k]) != a.nics.end()) continue;
        if (best < 0 ||
            std::tie(distance[k], use[k], k) < std::tie(distance[best], use[best], best)) {
          best = k;
        }
      }
      if (best < 0) break;  // fewer usable NICs than asked for
      ++use[best];
      a.nics.push_back(nics[best]);
    }
  }
}

}  // namespace racksim::topo
