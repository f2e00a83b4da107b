// The training step a checked scenario asks for, resolved once into values: the model, the
// layout, the pipeline's shape and pass orders, the per-rank kernel shapes, and the settings of
// the training section the generator and the memory ledger act on. The app builds it right after
// loading; the generator (training_step.h), the memory ledger (memory_ledger.h) and the report
// receive it and read no scenario field themselves.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/scenario.pb.h"
#include "workloads/model/transformer.h"
#include "workloads/training/layout.h"
#include "workloads/training/pipeline_map.h"
#include "workloads/training/pipeline_schedule.h"

namespace racksim {

// What the training section decides, as values.
struct TrainingSettings {
  int64_t micro_batch_size = 1;
  int64_t seq_length = 1;
  int64_t global_batch_size = 1;
  DataType dtype = DataType::kBf16;
  DataType grad_reduce_dtype = DataType::kBf16;
  config::DType dtype_name = config::BF16;  // as the report names it
  config::Training::Schedule schedule = config::Training::ONE_F_ONE_B;
  config::Training::Recompute recompute = config::Training::NONE;
  int zero_stage = 0;
  bool overlap_grad_reduce = false;
  // A sharded optimizer's parameter all-gather under the first micro-batch's forward
  // (training.overlap_param_gather) instead of after the update.
  bool overlap_param_gather = false;
  // Megatron-Core's buckets (training.bucket_first_chunk_only): only the first stage's first
  // chunk is bucketed; every other chunk is reduced, and gathered, whole.
  bool bucket_first_chunk_only = false;
  // Each chunk's reduction launched whole, pipeline-rank backward passes after its last one,
  // under virtual stages (training.align_grad_reduce).
  bool align_grad_reduce = false;
  double grad_bucket_elements = 0;  // 0: the framework's default
  bool offload_optimizer = false;
  bool offload_activations = false;
  bool pp_comm_overlap = false;
  // DeepSpeed's TrainSchedule exchange (training.pipeline_exchange DEEPSPEED): each transfer on
  // its own, blocking both sides (deepspeed_schedule.h).
  bool deepspeed_exchange = false;
  // Transformer Engine's TP communication overlap (training.tp_comm_overlap, tp > 1 only) and
  // the SMs its reduce-scatters hold.
  bool tp_comm_overlap = false;
  int tp_comm_overlap_sms = 0;
  bool skewed_routing = false;  // training.routing other than balanced (Zipf, from a file)
  // Without FlashAttention the s x s scores are kept for the backward (training.flash_attention
  // set to false).
  bool stores_attention_scores = false;
  bool flops_causal_halving = false;
  bool clip_grad_norm = true;  // the gradient norm and its all-reduce before the optimizer
  config::Training::GradAccumulation grad_accumulation = config::Training::FUSED_IN_WGRAD;
  double moment_bytes = 4;  // per element of each of AdamW's two moments
  std::string framework;    // training.framework, empty when the scenario names none
  // FP8 scales from each tensor's own amax (training.fp8_scaling CURRENT): a pass before a cast.
  bool fp8_current_scaling = false;
  // The FP8 GEMMs' weights live in FP8 (training.fp8_param_gather): no BF16 copy, no weight cast
  // in the forward, the data-parallel parameter gather at one byte.
  bool fp8_param_gather = false;
  // The output layer's weight gradients of the first wgrad_deferral_limit micro-batches (0: all)
  // run after the last stage's last backward pass (training.defer_embedding_wgrad).
  bool defer_embedding_wgrad = false;
  int wgrad_deferral_limit = 0;
  // Megatron-Core's combined 1F1B (training.moe_a2a_overlap): paired passes run on two compute
  // streams, so the step has a second set of streams.
  bool moe_a2a_overlap = false;
  // What selective recompute runs again (training.recompute_modules; all false unless recompute
  // is SELECTIVE): the attention's core, the layer's two norms, the experts' activation, the
  // latent attention's up-projections, a dense MLP, an MoE block, the shared experts.
  bool recomputes_core_attention = false;
  bool recomputes_norms = false;
  bool recomputes_moe_activation = false;
  bool recomputes_up_projections = false;
  bool recomputes_mlp = false;
  bool recomputes_moe = false;
  bool recomputes_shared_experts = false;
  bool recomputes_alternate_matmuls = false;
  // Per layer of the model, whether full recompute runs it again (training.recompute_method;
  // all false unless recompute is FULL).
  std::vector<bool> recomputed_layers;
  bool recomputes_layer(int layer) const {
    return layer >= 0 && static_cast<size_t>(layer) < recomputed_layers.size() &&
           recomputed_layers[static_cast<size_t>(layer)];
  }
  // Per layer full recompute takes, how many layers the checkpointed group it opens holds (1
  // unless recompute_method is UNIFORM; the chunk's last group may be shorter), 0 where an earlier
  // layer's group holds it: the group keeps that first layer's input alone.
  std::vector<int> recompute_group_layers;
  int recompute_group_at(int layer) const {
    return layer >= 0 && static_cast<size_t>(layer) < recompute_group_layers.size()
               ? recompute_group_layers[static_cast<size_t>(layer)]
               : 1;
  }
  int recomputed_layer_count() const {
    return static_cast<int>(std::count(recomputed_layers.begin(), recomputed_layers.end(), true));
  }
  // FP8 training keeps only its linear layers' inputs in FP8, the rest in BF16
  // (training.fp8_activations LINEAR_INPUTS); otherwise every saved element takes the dtype's
  // bytes.
  bool fp8_linear_inputs_only = false;
};

// Where a rank's offloaded state lives, how fast the host updates it, and the fixed cost of a
// step across nodes.
struct HostSettings {
  int sockets = 1;
  int pinned_offload_socket = -1;  // hardware.host.offload_socket; -1: the GPU's own socket
  double cpu_optimizer_params_per_s = 0;
  // hardware.scale_out.step_overhead_s when the job spans more than one node, else 0.
  double multi_node_step_overhead_s = 0;
  // hardware.host.pipeline_handoff_bytes_per_s; 0: a pipeline hand-off costs its stages nothing
  // beyond the transfer.
  double pipeline_handoff_bytes_per_s = 0;
};

// The cluster figures the ledger and the MFU's denominator need.
struct ClusterFigures {
  std::string model_name;            // the model preset, or "custom model"
  std::string hardware_name;         // the hardware preset, or "custom nodes"
  std::string hardware_preset;       // hardware.preset; empty for custom nodes
  std::string calibration_file;      // the calibration file's name without its folder, or empty
  double sustained_clock_ratio = 1;  // hardware.compute.sustained_clock_ratio as resolved
  // The compute, GPU and collective fields the scenario writes itself (its file or a --set),
  // not its preset, framework or calibration file; filled by the app, which has the sources.
  std::vector<std::string> own_model_fields;
  int nodes = 1;
  int gpus_per_node = 1;
  int scale_up_domain_gpus = 1;  // hardware.scale_up.domain_size, else the node's GPUs
  double hbm_bytes = 0;
  double peak_flops_per_gpu = 0;  // at the training dtype
  uint32_t gpus() const { return static_cast<uint32_t>(nodes * gpus_per_node); }
};

struct TrainingPlan {
  std::string name;  // the scenario's title
  TransformerModel model;
  int64_t attention_heads = 0;  // model.num_heads, as the activation formulas take it
  ParallelLayout layout;
  PipelineMap map;
  std::vector<PassOrder> orders;  // per pipeline stage
  int micro_batches = 0;          // per data-parallel rank per step
  RankShape shape;                // one rank's kernels of a layer
  // Per layer, the expert-parallel ranks' shares of the routed tokens (empty for dense layers).
  std::vector<std::vector<double>> expert_shares;
  TrainingSettings training;
  HostSettings host;
  ClusterFigures cluster;
  // expert_placement.node_dedup_dispatch: the dispatch's EP x EP matrix (bytes rank i sends rank
  // j per byte of a one-copy-per-expert dispatch; the combine is its transpose). Empty: every
  // expert copy travels on its own.
  std::vector<double> dedup_dispatch;
  double tokens_per_step() const {
    return static_cast<double>(training.global_batch_size * training.seq_length);
  }
};

// Resolves a loaded and validated scenario (config/scenario_loader.h).
TrainingPlan resolve_training_plan(const config::Scenario& scenario);

}  // namespace racksim
