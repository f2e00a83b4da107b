#include "topologies/ring_topology.h"

#include "topologies/single_domain.h"


#include <fmt/format.h>

namespace racksim::topo {

namespace {

// The GPU <-> port link: fast enough never to limit a flow, so the ring links alone do.
constexpr double kPortBytesPerS = 1e15;

void add_edge(Topology& t, VertexId from, VertexId to, double bytes_per_s, double latency_s,
              LinkClass link_class) {
  const auto index = static_cast<uint32_t>(t.edges.size());
  t.edges.push_back(
      boost::add_edge(from, to, Edge{bytes_per_s, latency_s, link_class, index}, t.graph).first);
}

}  // namespace

Topology build_ring(const RingSpec& spec) {
  Topology t = single_domain("ring", spec.gpus, spec.link_bytes_per_s, spec.link_latency_s);
  std::vector<VertexId> ports;
  for (uint32_t g = 0; g < spec.gpus; ++g) {
    const int index = static_cast<int>(g);
    t.gpus.push_back(
        boost::add_vertex(Vertex{VertexKind::kGpu, fmt::format("gpu{}", g), 0, index}, t.graph));
    ports.push_back(boost::add_vertex(
        Vertex{VertexKind::kNic, fmt::format("gpu{}.port", g), 0, index}, t.graph));
    add_edge(t, t.gpus.back(), ports.back(), kPortBytesPerS, 0, LinkClass::kPcie);
    GpuAttachment attachment;
    attachment.scale_up = ports.back();
    t.attachment.push_back(attachment);
  }
  // n links close the ring; two GPUs share one link, one GPU needs none.
  const uint32_t links = spec.gpus >= 3 ? spec.gpus : spec.gpus - 1;
  for (uint32_t g = 0; g < links; ++g) {
    add_edge(t, ports[g], ports[(g + 1) % spec.gpus], spec.link_bytes_per_s, spec.link_latency_s,
             LinkClass::kFabric);
  }
  return t;
}

}  // namespace racksim::topo
