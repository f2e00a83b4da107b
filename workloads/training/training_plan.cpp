#include "workloads/training/training_plan.h"

#include <algorithm>
#include <filesystem>

#include "proto/recompute_modules.h"
#include "proto/scale_up_domain.h"
#include "workloads/moe/token_routing.h"
#include "workloads/training/step_shape.h"

namespace racksim {

namespace {

TrainingSettings training_settings(const config::Training& t) {
  TrainingSettings s;
  s.micro_batch_size = t.micro_batch_size();
  s.seq_length = t.seq_length();
  s.global_batch_size = t.global_batch_size();
  s.dtype = to_data_type(t.dtype());
  s.grad_reduce_dtype = to_data_type(t.grad_reduce_dtype());
  s.dtype_name = t.dtype();
  s.schedule = t.schedule();
  s.recompute = t.recompute();
  s.zero_stage = t.zero_stage();
  s.framework = t.framework();
  s.fp8_current_scaling = t.fp8_scaling() == config::Training::CURRENT;
  s.fp8_param_gather = t.fp8_param_gather();
  s.overlap_grad_reduce = t.overlap_grad_reduce();
  s.overlap_param_gather = t.overlap_param_gather();
  s.bucket_first_chunk_only = t.bucket_first_chunk_only();
  s.align_grad_reduce = t.align_grad_reduce();
  s.grad_bucket_elements = static_cast<double>(t.grad_bucket_elements());
  s.offload_optimizer = t.offload_optimizer();
  s.offload_activations = t.offload_activations();
  s.pp_comm_overlap = t.pp_comm_overlap();
  s.deepspeed_exchange = t.pipeline_exchange() == config::Training::DEEPSPEED;
  s.tp_comm_overlap = t.tp_comm_overlap();
  s.tp_comm_overlap_sms = t.tp_comm_overlap_sms();
  s.defer_embedding_wgrad = t.defer_embedding_wgrad();
  s.wgrad_deferral_limit = t.wgrad_deferral_limit();
  s.moe_a2a_overlap = t.moe_a2a_overlap();
  if (t.recompute() == config::Training::SELECTIVE) {
    auto listed = [&](config::Training::RecomputeModule m) { return lists_recompute_module(t, m); };
    s.recomputes_core_attention =
        t.recompute_modules().empty() || listed(config::Training::CORE_ATTN);
    s.recomputes_norms = listed(config::Training::LAYERNORM);
    s.recomputes_moe_activation = listed(config::Training::MOE_ACT);
    s.recomputes_up_projections = listed(config::Training::MLA_UP_PROJ);
    s.recomputes_mlp = listed(config::Training::MLP);
    s.recomputes_moe = listed(config::Training::MOE);
    s.recomputes_shared_experts = listed(config::Training::SHARED_EXPERTS);
    s.recomputes_alternate_matmuls = listed(config::Training::ALTERNATE_MATMULS);
  }
  s.fp8_linear_inputs_only = t.fp8_activations() == config::Training::LINEAR_INPUTS;
  s.skewed_routing = t.routing() > config::Training::BALANCED;
  // The materialized attention keeps its scores for the backward, as does any kernel a scenario
  // declares not to be FlashAttention-style.
  s.stores_attention_scores = t.attention_impl() == config::Training::MATERIALIZED ||
                              (t.has_flash_attention() && !t.flash_attention());
  s.flops_causal_halving = t.flops_causal_halving();
  s.clip_grad_norm = !t.has_clip_grad_norm() || t.clip_grad_norm();
  s.grad_accumulation = t.grad_accumulation();
  if (t.has_optimizer_moment_dtype())
    s.moment_bytes = bytes_per_element(to_data_type(t.optimizer_moment_dtype()));
  return s;
}

HostSettings host_settings(const config::Hardware& hw) {
  HostSettings h;
  h.sockets = hw.host().sockets();
  h.pinned_offload_socket = hw.host().has_offload_socket() ? hw.host().offload_socket() : -1;
  h.cpu_optimizer_params_per_s = hw.host().cpu_optimizer_params_per_s();
  if (hw.nodes() > 1) h.multi_node_step_overhead_s = hw.scale_out().step_overhead_s();
  h.pipeline_handoff_bytes_per_s = hw.host().pipeline_handoff_bytes_per_s();
  return h;
}

double peak_flops(const config::Gpu& gpu, config::DType dtype) {
  switch (dtype) {
    case config::FP8:
      return gpu.fp8_flops_per_s();
    case config::FP32:
      return gpu.fp32_flops_per_s();
    default:
      return gpu.bf16_flops_per_s();
  }
}

ClusterFigures cluster_figures(const config::Scenario& s) {
  const auto& hw = s.hardware();
  ClusterFigures c;
  c.model_name = s.model().has_preset() ? s.model().preset() : std::string("custom model");
  c.hardware_name = hw.has_preset() ? hw.preset() : std::string("custom nodes");
  c.hardware_preset = hw.preset();
  if (s.has_calibration()) {
    c.calibration_file = std::filesystem::path(s.calibration()).filename().string();
  }
  if (hw.compute().has_sustained_clock_ratio()) {
    c.sustained_clock_ratio = hw.compute().sustained_clock_ratio();
  }
  c.nodes = hw.nodes();
  c.gpus_per_node = hw.gpus_per_node();
  c.scale_up_domain_gpus = scale_up_domain_gpus(hw);
  c.hbm_bytes = hw.gpu().hbm_bytes();
  c.peak_flops_per_gpu = peak_flops(hw.gpu(), s.training().dtype());
  return c;
}

// The node-deduplicated dispatch of the MoE layers: from the routing sample when the scenario
// gives one, else from the model's routing rule under a balanced load. Experts sit contiguously
// on the EP ranks, which are consecutive ranks on consecutive GPUs.
std::vector<double> dedup_dispatch(const config::Scenario& s) {
  const int ep = std::max(1, s.layout().ep());
  if (!s.expert_placement().node_dedup_dispatch() || ep == 1 || s.model().num_experts() == 0)
    return {};
  return dedup_dispatch_matrix(contiguous_placement(s.model().num_experts(), ep),
                               scenario_token_routing(s), routing_rule(s.model()),
                               expert_domain_size(s));
}

// Per layer, whether full recompute runs it again, and the layers of the checkpointed group each
// opens: by its index within its model chunk.
void resolve_recomputed_layers(const config::Training& t, const PipelineMap& map, int64_t layers,
                               TrainingSettings* settings) {
  settings->recomputed_layers.assign(static_cast<size_t>(layers), false);
  settings->recompute_group_layers.assign(static_cast<size_t>(layers), 1);
  for (int stage = 0; stage < map.stages(); ++stage) {
    for (int chunk = 0; chunk < map.chunks_per_stage(); ++chunk) {
      const LayerRange range = map.layers({stage, chunk});
      int open = -1;  // the layer whose group is open
      for (int i = 0; i < range.count; ++i) {
        const auto layer = static_cast<size_t>(range.first + i);
        if (layer >= static_cast<size_t>(layers)) continue;
        settings->recomputed_layers[layer] = recomputes_whole_layer(t, i);
        if (opens_recompute_group(t, i)) {
          open = static_cast<int>(layer);
        } else {
          settings->recompute_group_layers[layer] = 0;
          ++settings->recompute_group_layers[static_cast<size_t>(open)];
        }
      }
    }
  }
}

}  // namespace

TrainingPlan resolve_training_plan(const config::Scenario& scenario) {
  const TransformerModel model(scenario.model());
  TrainingPlan plan{scenario.name(),
                    model,
                    scenario.model().num_heads(),
                    ParallelLayout::from_config(scenario.layout()),
                    pipeline_map(scenario),
                    pipeline_orders(scenario),
                    micro_batches_per_replica(scenario),
                    rank_shape(scenario),
                    expert_rank_shares(scenario, model),
                    training_settings(scenario.training()),
                    host_settings(scenario.hardware()),
                    cluster_figures(scenario),
                    dedup_dispatch(scenario)};
  resolve_recomputed_layers(scenario.training(), plan.map, plan.model.layers(), &plan.training);
  return plan;
}

}  // namespace racksim
