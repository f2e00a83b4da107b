#include "topologies/switch_topology.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace racksim::topo {

Topology build_switch(const SwitchSpec& spec) {
  if (spec.gpus < 1) throw std::invalid_argument("switch: at least 1 GPU");
  if (!(spec.link_bytes_per_s > 0) || !std::isfinite(spec.link_bytes_per_s)) {
    throw std::invalid_argument(
        fmt::format("switch: link bandwidth {} is not a finite value > 0", spec.link_bytes_per_s));
  }
  if (!(spec.link_latency_s >= 0) || !std::isfinite(spec.link_latency_s)) {
    throw std::invalid_argument(
        fmt::format("switch: link latency {} is not a finite value >= 0", spec.link_latency_s));
  }
  Topology t;
  const int gpus = static_cast<int>(spec.gpus);
  t.nodes = 1;
  t.gpus_per_node = gpus;
  t.spec.nodes = 1;
  t.spec.node.gpus = gpus;
  t.spec.node.has_host = false;
  t.spec.scale_up.domain_size = gpus;
  t.spec.scale_up.port_bytes_per_s = spec.link_bytes_per_s;
  t.spec.scale_up.latency_s = spec.link_latency_s;
  const VertexId hub = boost::add_vertex(Vertex{VertexKind::kNvSwitch, "switch", 0, 0}, t.graph);
  for (uint32_t g = 0; g < spec.gpus; ++g) {
    const int index = static_cast<int>(g);
    const VertexId gpu =
        boost::add_vertex(Vertex{VertexKind::kGpu, fmt::format("gpu{}", g), 0, index}, t.graph);
    t.gpus.push_back(gpu);
    const auto edge_index = static_cast<uint32_t>(t.edges.size());
    t.edges.push_back(boost::add_edge(gpu, hub,
                                      Edge{spec.link_bytes_per_s, spec.link_latency_s,
                                           LinkClass::kNvlink, edge_index},
                                      t.graph)
                          .first);
    GpuAttachment attachment;
    attachment.scale_up = hub;
    t.attachment.push_back(attachment);
  }
  return t;
}

}  // namespace racksim::topo
