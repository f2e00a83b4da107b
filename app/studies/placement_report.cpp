#include "app/studies/placement_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "workloads/model/transformer.h"
#include "workloads/moe/expert_placement.h"
#include "workloads/moe/expert_routing.h"
#include "workloads/moe/token_routing.h"
#include "workloads/training/training_step.h"

namespace racksim::app {

namespace {

struct Candidate {
  std::string name;
  config::ExpertPlacement::Strategy strategy;
  int replicas;
};

std::vector<Candidate> candidates(bool have_sample) {
  std::vector<Candidate> list{
      {"contiguous", config::ExpertPlacement::CONTIGUOUS, 0},
      {"round-robin", config::ExpertPlacement::ROUND_ROBIN, 0},
      {"by load", config::ExpertPlacement::BY_LOAD, 0},
      {"by load + 1 hot replica/GPU", config::ExpertPlacement::BY_LOAD, 1},
  };
  if (have_sample) {
    list.push_back({"by co-occurrence", config::ExpertPlacement::BY_COOCCURRENCE, 0});
    list.push_back({"by co-occurrence + 1 replica", config::ExpertPlacement::BY_COOCCURRENCE, 1});
  }
  return list;
}

// What one MoE layer costs under every map; the layer counts `weight` times (layers whose
// routing is alike are costed once).
struct LayerCost {
  const MlpSpec& spec;
  int ep = 1;
  int per_domain = 1;  // EP ranks per scale-up domain
  double routed = 0;   // token copies one EP group routes per step
  double e_act = 2;
  double e_w = 2;
  double flops_per_s = 0;
  double hbm = 0;

  // The slowest rank's expert roofline: its tokens' FLOPs against its touched experts' weights.
  double slowest_expert_time_s(const ExpertPlacementMap& map, const std::vector<double>& shares,
                               const std::vector<double>& load) const {
    const double expert_params = 3.0 * static_cast<double>(spec.hidden * spec.expert_ffn);
    double slowest = 0;
    for (int j = 0; j < ep; ++j) {
      const double flops = 2 * routed * load[j] * expert_params;
      const double bytes = expected_touched_experts(map, shares, j, routed) * expert_params * e_w;
      slowest = std::max(slowest, std::max(flops / flops_per_s, bytes / hbm));
    }
    return slowest;
  }

  void add(const Candidate& c, const std::vector<double>& shares,
           const std::optional<TokenRouting>& sample, const CoOccurrence& co, double weight,
           PlacementRow* row) const {
    config::ExpertPlacement p;
    p.set_strategy(c.strategy);
    p.set_redundant_per_rank(c.replicas);
    const ExpertPlacementMap map = place_experts(p, shares, ep, per_domain, co);
    const auto load = placed_rank_shares(map, shares);
    row->imbalance = std::max(row->imbalance, imbalance(load));
    row->slowest_expert_time_s += weight * slowest_expert_time_s(map, shares, load);
    const double token_bytes = static_cast<double>(spec.hidden) * e_act;
    const double share = crossing_share(map, shares, per_domain);
    row->cross_domain_share = share;  // alike in every layer but under per-layer routing skew
    row->cross_domain_bytes += weight * routed * token_bytes * share;
    if (sample) {
      const double copies = remote_domain_copies_per_token(map, *sample, per_domain);
      row->remote_domains_per_token = copies;
      row->dedup_cross_domain_bytes =
          row->dedup_cross_domain_bytes.value_or(0) +
          weight * routed / static_cast<double>(spec.top_k) * copies * token_bytes;
    }
  }
};

// Whether the MoE layers' expert shares differ (ZIPF and FROM_FILE training routing without a
// sample): then every layer is costed, else one stands for all.
bool shares_differ_per_layer(const std::vector<ExpertLayerPlan>& layers) {
  return std::any_of(layers.begin(), layers.end(), [&](const ExpertLayerPlan& layer) {
    return layer.expert_shares != layers.front().expert_shares;
  });
}

}  // namespace

std::vector<PlacementRow> placement_rows(const InferenceRunPlan& plan) {
  const InferencePlan& w = plan.workload;
  const std::vector<ExpertLayerPlan>& layers = w.expert_layers;
  if (layers.empty()) return {};
  int first_moe = 0;
  while (!w.model.mlp(first_moe).moe) ++first_moe;
  const MlpSpec& spec = w.model.mlp(first_moe);
  LayerCost cost{spec};
  cost.ep = w.layout.ep();
  cost.per_domain = w.ranks_per_node;
  cost.e_act = bytes_per_element(w.compute_dtype);
  cost.e_w = bytes_per_element(w.weight_dtype);
  cost.routed = static_cast<double>(w.decode.batch) * cost.ep / w.layout.dp() *
                static_cast<double>(spec.top_k);
  cost.flops_per_s = plan.peak_flops_per_gpu();
  cost.hbm = plan.hbm_bytes_per_s();

  const std::optional<TokenRouting>& sample = w.routing_sample;
  const bool per_layer = shares_differ_per_layer(layers);
  const size_t costed = per_layer ? layers.size() : 1;
  const double weight = per_layer ? 1.0 : static_cast<double>(layers.size());

  std::vector<PlacementRow> rows;
  for (const auto& c : candidates(sample.has_value())) {
    PlacementRow row;
    row.map = c.name;
    row.imbalance = 0;
    for (size_t i = 0; i < costed; ++i) {
      cost.add(c, layers[i].expert_shares, sample, w.cooccurrence, weight, &row);
    }
    rows.push_back(row);
  }
  return rows;
}

std::string placement_table(const std::vector<PlacementRow>& rows) {
  if (rows.empty()) return "";
  std::string out =
      "\nexpert placement (all MoE layers, per decode step at the scenario's batch; routing from "
      "expert_placement.token_routing_file or training.routing):\n";
  out += fmt::format("  {:<30} {:>10} {:>15} {:>15} {:>7} {:>15} {:>12}\n", "map", "imbalance",
                     "slowest GPU ms", "cross-domain MB", "share", "dedup MB", "domains/token");
  for (const auto& r : rows) {
    out += fmt::format(
        "  {:<30} {:>10.3f} {:>15.4g} {:>15.4g} {:>6.1f}% {:>15} {:>12}\n", r.map, r.imbalance,
        r.slowest_expert_time_s * 1e3, r.cross_domain_bytes / 1e6, 100 * r.cross_domain_share,
        r.dedup_cross_domain_bytes ? fmt::format("{:.4g}", *r.dedup_cross_domain_bytes / 1e6) : "-",
        r.remote_domains_per_token ? fmt::format("{:.3f}", *r.remote_domains_per_token) : "-");
  }
  out +=
      "  imbalance: busiest GPU's tokens over the mean, worst layer; slowest GPU: its expert "
      "roofline time summed over\n"
      "  the layers; cross-domain: one copy per chosen expert in another scale-up domain (a node "
      "of HGX servers, an\n"
      "  NVL72 rack); dedup (with a token routing sample): one copy per destination domain, "
      "forwarded inside it over\n"
      "  NVLink (DeepSeek-V3's dispatch; expert_placement.node_dedup_dispatch simulates it).\n";
  return out;
}

}  // namespace racksim::app
