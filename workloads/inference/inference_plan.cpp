#include "workloads/inference/inference_plan.h"

#include <algorithm>
#include <stdexcept>

#include "workloads/training/step_shape.h"

namespace racksim {

namespace {

DataType dtype_or(config::DType dtype, DataType fallback) {
  return dtype == config::DTYPE_UNSPECIFIED ? fallback : to_data_type(dtype);
}

InferenceShape shape_of(const config::Inference& inference, InferencePhase phase) {
  InferenceShape s;
  s.phase = phase;
  s.batch = inference.batch() > 0 ? inference.batch() : 1;
  s.context = inference.context_tokens();
  s.prompt = inference.prompt_tokens() > 0 ? inference.prompt_tokens()
                                           : std::max<int64_t>(1, inference.context_tokens());
  return s;
}

// Per MoE layer: the experts' shares (from the routing sample, else the scenario's routing),
// their placement over the EP group, and the ranks' shares under it.
std::vector<ExpertLayerPlan> plan_expert_layers(const config::Scenario& scenario,
                                                const InferencePlan& plan) {
  std::vector<ExpertLayerPlan> layers;
  for (int l = 0; l < plan.model.layers(); ++l) {
    const MlpSpec& spec = plan.model.mlp(l);
    if (!spec.moe) continue;
    ExpertLayerPlan layer;
    layer.expert_shares = layer_expert_shares(scenario, plan.routing_sample, spec.experts,
                                              static_cast<int>(layers.size()));
    layer.map = place_experts(scenario.expert_placement(), layer.expert_shares, plan.layout.ep(),
                              plan.ranks_per_node, plan.cooccurrence);
    layer.rank_shares = placed_rank_shares(layer.map, layer.expert_shares);
    layers.push_back(std::move(layer));
  }
  return layers;
}

}  // namespace

InferencePlan resolve_inference_plan(const config::Scenario& scenario) {
  const auto& l = scenario.layout();
  if (l.cp() > 1) throw std::invalid_argument("inference: layout.cp must be 1");
  const config::Inference& inference = scenario.inference();
  const DataType compute = to_data_type(scenario.training().dtype());
  const DataType weight = dtype_or(inference.weight_dtype(), compute);
  std::optional<TokenRouting> sample = scenario_token_routing(scenario);
  CoOccurrence cooccurrence = sample ? token_cooccurrence(*sample) : CoOccurrence{};
  InferencePlan plan{TransformerModel(scenario.model()),
                     ParallelLayout(l.tp(), 1, l.dp(), l.pp(), std::max(1, l.ep())),
                     compute,
                     weight,
                     dtype_or(inference.kv_dtype(), weight),
                     shape_of(inference, InferencePhase::kDecode),
                     shape_of(inference, InferencePhase::kPrefill),
                     {},  // expert_layers: below, from the plan's model, layout and sample
                     std::move(sample),
                     std::move(cooccurrence),
                     scenario.expert_placement().node_dedup_dispatch(),
                     expert_domain_size(scenario),
                     routing_rule(scenario.model())};
  plan.expert_layers = plan_expert_layers(scenario, plan);
  return plan;
}

}  // namespace racksim
