#include "topologies/switch_topology.h"

#include "topologies/single_domain.h"


#include <fmt/format.h>

namespace racksim::topo {

Topology build_switch(const SwitchSpec& spec) {
  Topology t = single_domain("switch", spec.gpus, spec.link_bytes_per_s, spec.link_latency_s);
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
