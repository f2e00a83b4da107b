// Expert placement maps compared on a scenario's first MoE layer at its decode batch: for each
// map, the slowest rank's expert time (roofline at peak: its tokens' FLOPs against its touched
// experts' weights), the imbalance factor (busiest rank's tokens over the mean), and the
// dispatch bytes per step that leave a node. Token shares come from training.routing (balanced,
// seeded Zipf, or a file of per-expert token counts).
#pragma once

#include <string>
#include <vector>

#include "proto/scenario.pb.h"

namespace racksim::app {

struct PlacementRow {
  std::string map;
  double imbalance = 1;
  double slowest_expert_time_s = 0;
  double cross_node_bytes = 0;  // per MoE layer per step (dispatch; the combine mirrors it)
  double cross_node_share = 0;
};

// Empty when the model has no MoE layer.
std::vector<PlacementRow> placement_rows(const config::Scenario& scenario);
std::string placement_table(const std::vector<PlacementRow>& rows);

}  // namespace racksim::app
