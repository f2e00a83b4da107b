// Expert placement maps compared over a scenario's MoE layers at its decode batch: for each
// map, the slowest rank's expert time per step (per layer the roofline at peak of its tokens'
// FLOPs against its touched experts' weights, summed over the layers), the imbalance factor
// (busiest rank's tokens over the mean, in the worst layer), and the dispatch bytes per step
// that leave a scale-up domain (a node of HGX servers, an NVL72 rack): one copy per chosen
// expert, and, with a token routing sample, one copy per destination domain (a deduplicated
// dispatch). Token shares come from
// expert_placement.token_routing_file when given, else training.routing (balanced, seeded Zipf,
// or a file of per-expert token counts).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/inference_run.h"

namespace racksim::app {

struct PlacementRow {
  std::string map;
  double imbalance = 1;              // worst MoE layer
  double slowest_expert_time_s = 0;  // per step: summed over the MoE layers
  double cross_domain_bytes = 0;     // per step, all MoE layers (dispatch; the combine mirrors it)
  double cross_domain_share = 0;     // of the dispatch's token copies
  // With a token routing sample: the same traffic when each token crosses once per destination
  // domain, and that number of domain copies per token.
  std::optional<double> dedup_cross_domain_bytes;
  std::optional<double> remote_domains_per_token;
};

// Empty when the model has no MoE layer.
std::vector<PlacementRow> placement_rows(const InferenceRunPlan& plan);
std::string placement_table(const std::vector<PlacementRow>& rows);

}  // namespace racksim::app
