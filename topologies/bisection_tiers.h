// Bisection bandwidth per tier of the hierarchy: a scale-up domain, a scalable unit (the
// servers under one set of rail leaves), a pod (three tiers) and the whole cluster, each the
// first such block of the cluster cut into halves.
#pragma once

#include <string>
#include <vector>

#include "topologies/bisection.h"

namespace racksim::topo {

struct TierBisection {
  std::string tier;  // "scale-up domain", "scalable unit", "pod", "cluster"
  int gpus = 0;      // in the block that is cut
  BisectionCut cut;
  double formula_bytes_per_s = 0;    // per direction
  double max_flow_bytes_per_s = -1;  // on the graph; < 0: not computed
};

// The tiers that exist in the cluster, smallest block first, with their formulas:
//   scale-up domain  (d / 2) x the GPU's NVLink port (the cut through the switch); a mesh:
//                    (d / 2) x min(port block, d / 2 x pairwise link)
//   unit, pod, cluster  scale_out_bisection_formula_bytes_per_s (bisection.h): no
//                    oversubscription inside a unit, / o_leaf inside a pod, / o_pod above
// A scale-out tier whose block is no larger than the one below it (a cluster of one unit) is
// left out. Max-flow is not computed here (bisection_max_flow_bytes_per_s on each cut).
std::vector<TierBisection> bisection_per_tier(const ClusterSpec& spec);

// Fills every tier's max_flow_bytes_per_s from the graph.
void add_max_flow(const Topology& topology, std::vector<TierBisection>& tiers);

}  // namespace racksim::topo
