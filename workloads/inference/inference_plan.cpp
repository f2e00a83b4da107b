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
  const CoOccurrence cooccurrence =
      plan.routing_sample ? token_cooccurrence(*plan.routing_sample) : CoOccurrence{};
  std::vector<ExpertLayerPlan> layers;
  for (int l = 0; l < plan.model.layers(); ++l) {
    const MlpSpec& spec = plan.model.mlp(l);
    if (!spec.moe) continue;
    ExpertLayerPlan layer;
    layer.expert_shares = layer_expert_shares(scenario, plan.routing_sample, spec.experts,
                                              static_cast<int>(layers.size()));
    layer.map = place_experts(scenario.expert_placement(), layer.expert_shares, plan.layout.ep(),
                              plan.ranks_per_node, cooccurrence);
    layer.rank_shares = placed_rank_shares(layer.map, layer.expert_shares);
    layers.push_back(std::move(layer));
  }
  return layers;
}

}  // namespace

InferencePlan resolve_inference_plan(const config::Scenario& scenario) {
  const auto& l = scenario.layout();
  if (l.cp() > 1) throw std::invalid_argument("inference: layout.cp must be 1");
  InferencePlan plan{TransformerModel(scenario.model()),
                     ParallelLayout(l.tp(), 1, l.dp(), l.pp(), std::max(1, l.ep()))};
  plan.compute_dtype = to_data_type(scenario.training().dtype());
  plan.weight_dtype = dtype_or(scenario.inference().weight_dtype(), plan.compute_dtype);
  plan.kv_dtype = dtype_or(scenario.inference().kv_dtype(), plan.weight_dtype);
  plan.decode = shape_of(scenario.inference(), InferencePhase::kDecode);
  plan.prefill = shape_of(scenario.inference(), InferencePhase::kPrefill);
  plan.routing_sample = scenario_token_routing(scenario);
  plan.node_dedup_dispatch = scenario.expert_placement().node_dedup_dispatch();
  plan.ranks_per_node = expert_domain_size(scenario);
  plan.expert_layers = plan_expert_layers(scenario, plan);
  return plan;
}

}  // namespace racksim
