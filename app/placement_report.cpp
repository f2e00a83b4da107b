#include "app/placement_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "workloads/expert_placement.h"
#include "workloads/expert_routing.h"
#include "workloads/training_step.h"
#include "workloads/transformer.h"

namespace racksim::app {

namespace {

struct Candidate {
  std::string name;
  config::ExpertPlacement::Strategy strategy;
  int replicas;
};

}  // namespace

std::vector<PlacementRow> placement_rows(const config::Scenario& s) {
  const TransformerModel model(s.model());
  int layer = -1;
  for (int l = 0; l < model.layers() && layer < 0; ++l) layer = model.mlp(l).moe ? l : -1;
  if (layer < 0) return {};
  const MlpSpec& spec = model.mlp(layer);
  const int ep = std::max(1, s.layout().ep());
  const int per_node = std::min(ep, std::max(1, s.hardware().gpus_per_node()));
  const auto shares = expert_shares(s.training(), spec.experts, 0);
  const double e_act = bytes_per_element(to_data_type(s.training().dtype()));
  const double e_w = s.inference().weight_dtype() == config::DTYPE_UNSPECIFIED
                         ? e_act
                         : bytes_per_element(to_data_type(s.inference().weight_dtype()));
  const double expert_params = 3.0 * static_cast<double>(spec.hidden * spec.expert_ffn);
  // Token copies routed by one EP group per step: its share of the batch times top-k.
  const int dp = std::max(1, s.layout().dp());
  const double group_tokens =
      static_cast<double>(std::max<int64_t>(1, s.inference().batch())) * ep / dp;
  const double routed = group_tokens * static_cast<double>(spec.top_k);
  const double flops_per_s = to_data_type(s.training().dtype()) == DataType::kFp8
                                 ? s.hardware().gpu().fp8_flops_per_s()
                                 : s.hardware().gpu().bf16_flops_per_s();
  const double hbm = s.hardware().gpu().hbm_bytes_per_s();
  const std::vector<Candidate> candidates{
      {"contiguous", config::ExpertPlacement::CONTIGUOUS, 0},
      {"round-robin", config::ExpertPlacement::ROUND_ROBIN, 0},
      {"by load", config::ExpertPlacement::BY_LOAD, 0},
      {"by load + 1 hot replica/GPU", config::ExpertPlacement::BY_LOAD, 1},
  };
  std::vector<PlacementRow> rows;
  for (const auto& c : candidates) {
    config::ExpertPlacement p;
    p.set_strategy(c.strategy);
    p.set_redundant_per_rank(c.replicas);
    const ExpertPlacementMap map = place_experts(p, shares, ep, per_node);
    const auto load = placed_rank_shares(map, shares);
    PlacementRow row;
    row.map = c.name;
    row.imbalance = imbalance(load);
    for (int j = 0; j < ep; ++j) {
      const double flops = 2 * routed * load[j] * expert_params;
      const double bytes = expected_touched_experts(map, shares, j, routed) * expert_params * e_w;
      row.slowest_expert_time_s =
          std::max(row.slowest_expert_time_s, std::max(flops / flops_per_s, bytes / hbm));
    }
    row.cross_node_share = crossing_share(map, shares, per_node);
    row.cross_node_bytes = routed * static_cast<double>(spec.hidden) * e_act * row.cross_node_share;
    rows.push_back(row);
  }
  return rows;
}

std::string placement_table(const std::vector<PlacementRow>& rows) {
  if (rows.empty()) return "";
  std::string out =
      "\nexpert placement (first MoE layer, the scenario's batch, routing from "
      "training.routing):\n";
  out += fmt::format("  {:<28} {:>10} {:>16} {:>16} {:>10}\n", "map", "imbalance", "slowest GPU us",
                     "cross-node MB", "share");
  for (const auto& r : rows) {
    out += fmt::format("  {:<28} {:>10.3f} {:>16.4g} {:>16.4g} {:>9.1f}%\n", r.map, r.imbalance,
                       r.slowest_expert_time_s * 1e6, r.cross_node_bytes / 1e6,
                       100 * r.cross_node_share);
  }
  return out;
}

}  // namespace racksim::app
