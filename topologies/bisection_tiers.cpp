#include "topologies/bisection_tiers.h"

#include <algorithm>
#include <string>
#include <utility>

namespace racksim::topo {
namespace {

double scale_up_formula_bytes_per_s(const ClusterSpec& spec, int gpus) {
  const ScaleUpSpec& up = spec.scale_up;
  const int half = gpus / 2;
  // A mesh GPU reaches the other half over `half` pairwise links, capped by its port block.
  if (spec.node.kind == NodeKind::kMesh)
    return half * std::min(up.port_bytes_per_s, half * up.mesh_link_bytes_per_s);
  return half * up.port_bytes_per_s;
}

bool has_infiniband(const NodeSpec& node) {
  return std::any_of(node.ports.begin(), node.ports.end(),
                     [](const PortSpec& p) { return p.link_layer == LinkLayer::kInfiniband; });
}

// Scale-out blocks in nodes, smallest first: a unit, a pod (three tiers), the cluster.
std::vector<std::pair<std::string, int>> scale_out_blocks(const ClusterSpec& spec) {
  const FabricSpec& f = spec.fabric;
  std::vector<std::pair<std::string, int>> blocks{{"scalable unit", f.nodes_per_unit}};
  if (f.tiers == 3 && f.units_per_pod >= 1)
    blocks.emplace_back("pod", f.units_per_pod * f.nodes_per_unit);
  blocks.emplace_back("cluster", spec.nodes);
  std::vector<std::pair<std::string, int>> out;
  for (auto [name, nodes] : blocks) {
    nodes = std::min(nodes, spec.nodes);
    if (nodes >= 2 && (out.empty() || nodes > out.back().second)) out.emplace_back(name, nodes);
  }
  return out;
}

}  // namespace

std::vector<TierBisection> bisection_per_tier(const ClusterSpec& spec) {
  std::vector<TierBisection> out;
  const int domain_gpus = std::min(spec.scale_up.domain_size, spec.gpus());
  if (domain_gpus >= 2) {
    out.push_back({"scale-up domain",
                   domain_gpus,
                   {CutNetwork::kScaleUp, 0, domain_gpus},
                   scale_up_formula_bytes_per_s(spec, domain_gpus)});
  }
  if (!has_infiniband(spec.node)) return out;
  for (const auto& [name, nodes] : scale_out_blocks(spec)) {
    out.push_back({name,
                   nodes * spec.node.gpus,
                   {CutNetwork::kScaleOut, 0, nodes},
                   scale_out_bisection_formula_bytes_per_s(spec, nodes)});
  }
  return out;
}

void add_max_flow(const Topology& topology, std::vector<TierBisection>& tiers) {
  for (TierBisection& tier : tiers)
    tier.max_flow_bytes_per_s = bisection_max_flow_bytes_per_s(topology, tier.cut);
}

}  // namespace racksim::topo
