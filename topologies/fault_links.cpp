#include "topologies/fault_links.h"

#include <stdexcept>

#include <fmt/format.h>

namespace racksim::topo {
namespace {

// The edge between two adjacent vertices.
Edge& edge_between(Topology& t, VertexId a, VertexId b) {
  const auto [edge, found] = boost::edge(a, b, t.graph);
  if (!found) {
    throw std::logic_error(
        fmt::format("no link between {} and {}", t.graph[a].name, t.graph[b].name));
  }
  return t.graph[edge];
}

// A NIC's link to its leaf switch (its only scale-out edge).
Edge& nic_uplink(Topology& t, VertexId nic) {
  for (auto [it, end] = boost::out_edges(nic, t.graph); it != end; ++it) {
    Edge& e = t.graph[*it];
    if (e.link_class == LinkClass::kInfiniband || e.link_class == LinkClass::kEthernet) return e;
  }
  throw std::logic_error(fmt::format("{} has no link to a leaf switch", t.graph[nic].name));
}

}  // namespace

void degrade_links(Topology& t, const Faults& faults) {
  for (const DegradedLinkFault& f : faults.degraded_links) {
    if (f.gpu >= t.num_gpus()) {
      throw std::invalid_argument(
          fmt::format("degraded link on GPU {}: the cluster has {} GPUs", f.gpu, t.num_gpus()));
    }
    const GpuAttachment& a = t.attachment[f.gpu];
    if (f.port == FaultPort::kScaleUp) {
      edge_between(t, t.gpus[f.gpu], a.scale_up).bytes_per_s *= f.bandwidth_factor;
      continue;
    }
    for (VertexId nic : a.nics) nic_uplink(t, nic).bytes_per_s *= f.bandwidth_factor;
  }
}

}  // namespace racksim::topo
