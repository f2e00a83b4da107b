// The framework presets. Each sets only what its framework fixes; the run's own choices (dtype,
// recompute, schedule, batch) stay the scenario's. The settings and their sources are the table
// of docs/scenarios.md ("Which framework's behaviour").
#include "workloads/training/framework_presets.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace racksim {
namespace {

using config::Training;

// The dtype of the parameters (and so of their gradients) under the training dtype: FP8 GEMMs
// keep BF16 parameters, as does the default dtype.
config::DType parameter_dtype(const config::Scenario& scenario) {
  const config::DType dtype = scenario.training().dtype();
  return dtype == config::FP16 || dtype == config::FP32 ? dtype : config::BF16;
}

// Megatron-LM 2021 and Megatron-DeepSpeed: the 2021 step.
Training megatron_2021_training(const config::Scenario& scenario) {
  Training t;
  t.set_grad_reduce_dtype(parameter_dtype(scenario));
  t.set_grad_accumulation(Training::AUTOGRAD);
  t.set_attention_impl(Training::MATERIALIZED);
  t.set_cross_entropy(Training::FP32_UNFUSED);
  t.set_overlap_grad_reduce(false);
  t.set_zero_stage(0);
  t.set_tp_comm_overlap(false);
  t.set_embedding_transpose(true);
  return t;
}

// Megatron-DeepSpeed: the 2021 step, its pipelines run by DeepSpeed's engine (TrainSchedule's
// exchange) where the scenario's own choices allow it (deepspeed_exchange_refusal).
Training megatron_deepspeed_training(const config::Scenario& scenario) {
  Training t = megatron_2021_training(scenario);
  if (!deepspeed_exchange_refusal(scenario)) t.set_pipeline_exchange(Training::DEEPSPEED);
  return t;
}

Training megatron_bridge_training(const config::Scenario& scenario) {
  Training t;
  t.set_grad_reduce_dtype(parameter_dtype(scenario));  // grad_reduce_in_fp32 false
  t.set_grad_accumulation(Training::FUSED_IN_WGRAD);
  t.set_attention_impl(Training::FLASH);
  t.set_cross_entropy(Training::FUSED);
  t.set_embedding_transpose(true);
  t.set_overlap_grad_reduce(true);
  t.set_zero_stage(1);
  // overlap_param_gather, where the scenario keeps the optimizer sharded.
  const config::Training& own = scenario.training();
  const bool sharded = !own.has_zero_stage() || own.zero_stage() >= 1;
  // Megatron-Core's DistributedDataParallel (not its FSDP, zero_stage 3).
  const bool megatron_ddp = !own.has_zero_stage() || own.zero_stage() <= 2;
  t.set_overlap_param_gather(sharded && megatron_ddp);
  // DistributedDataParallel buckets only the first stage's first chunk; CommOverlapConfig sets
  // 128 Mi-element buckets where there is data parallelism, and dist_config.align_grad_reduce is
  // on by default.
  if (megatron_ddp) t.set_bucket_first_chunk_only(true);
  t.set_grad_bucket_elements(int64_t{128} * 1024 * 1024);
  if (!own.has_overlap_grad_reduce() || own.overlap_grad_reduce()) t.set_align_grad_reduce(true);
  const config::Layout& layout = scenario.layout();
  t.set_tp_comm_overlap(layout.tp() > 1 && layout.sequence_parallel());
  // CommOverlapConfig: overlap_p2p_comm with virtual stages, batched blocking sends without.
  t.set_pp_comm_overlap(layout.pp() > 1 && layout.virtual_stages() > 1);
  // TEGroupedMLP: Transformer Engine's GroupedLinear, a cuBLAS GEMM per expert on its streams.
  t.set_expert_gemm(Training::PER_EXPERT_STREAMS);
  // bf16_with_fp8_current_scaling_mixed (fp8_cs): per-tensor current scaling, FP8 parameters.
  if (own.dtype() == config::FP8) {
    t.set_fp8_scaling(Training::CURRENT);
    t.set_fp8_param_gather(sharded);  // gathered by the distributed optimizer
  }
  return t;
}

// A framework that shards data parallelism itself (DeepSpeed's engine, PyTorch FSDP): PyTorch's
// autograd sums the micro-batches, gradients are reduced in the parameters' dtype, no TP
// overlap. Attention and the loss are the model code's, not the framework's, and keep the
// scenario's.
Training sharded_data_parallel_training(const config::Scenario& scenario, int zero_stage,
                                        bool overlap_grad_reduce) {
  Training t;
  t.set_grad_reduce_dtype(parameter_dtype(scenario));
  t.set_grad_accumulation(Training::AUTOGRAD);
  t.set_zero_stage(zero_stage);
  t.set_overlap_grad_reduce(overlap_grad_reduce);
  t.set_tp_comm_overlap(false);
  return t;
}

// DeepSpeed's engine at a ZeRO stage (deepspeed/runtime/zero/config.py defaults): gradients
// reduced in buckets of reduce_bucket_size = 5e8 elements, during the backward only at stage 3
// (overlap_comm defaults to stage == 3), in the parameters' dtype (communication_data_type
// unset).
Training deepspeed_training(const config::Scenario& scenario, int zero_stage) {
  Training t = sharded_data_parallel_training(scenario, zero_stage, zero_stage == 3);
  t.set_grad_bucket_elements(500'000'000);
  return t;
}

Training deepspeed_zero1_training(const config::Scenario& s) {
  return deepspeed_training(s, 1);
}
Training deepspeed_zero2_training(const config::Scenario& s) {
  return deepspeed_training(s, 2);
}
Training deepspeed_zero3_training(const config::Scenario& s) {
  return deepspeed_training(s, 3);
}

// PyTorch FSDP with FULL_SHARD: parameters gathered per wrapped layer (one layer ahead, backward
// prefetch), every micro-batch's gradients reduce-scattered from the post-backward hooks on
// their own stream, in the parameters' dtype (MixedPrecision's reduce_dtype defaults to
// param_dtype); autograd adds each micro-batch's reduced shard into the sharded gradient.
Training pytorch_fsdp_training(const config::Scenario& scenario) {
  return sharded_data_parallel_training(scenario, 3, true);
}

// DeepSeek's HAI-LLM as the DeepSeek-V3 report describes it (sections 3.2 and 3.3): no tensor
// parallelism, DualPipe over an even number of stages, ZeRO-1 data parallelism, AdamW's moments
// in BF16, gradients kept (and so reduced) in FP32, and under FP8 training the MoE dispatch in
// FP8 (the combine stays BF16). The 20 SMs its all-to-all kernels hold and node-limited dispatch
// are the hardware's and the placement's fields, not the training's.
Training hai_llm_training(const config::Scenario& scenario) {
  Training t;
  t.set_zero_stage(1);
  t.set_grad_reduce_dtype(config::FP32);
  t.set_optimizer_moment_dtype(config::BF16);
  t.set_tp_comm_overlap(false);
  const int pp = scenario.layout().pp();
  if (pp >= 2 && pp % 2 == 0) t.set_schedule(Training::DUALPIPE);
  if (scenario.training().dtype() == config::FP8) t.set_moe_dispatch_dtype(config::FP8);
  return t;
}

// A preset and the training fields it sets for a scenario.
struct Framework {
  FrameworkPreset preset;
  Training (*training)(const config::Scenario& scenario);
};

constexpr const char* kStageOneAndTwo =
    "stage_1_and_2.py (stage 2 reduces at every micro-step, stage 1 at the accumulation "
    "boundary)";

// Where DeepSpeed's defaults are, followed by what each stage's source adds.
std::string deepspeed_source(const char* stage_files) {
  return std::string(
             "github.com/deepspeedai/DeepSpeed (Apache-2.0) deepspeed/runtime/zero/config.py "
             "(reduce_bucket_size 5e8, overlap_comm on at stage 3 only) and ") +
         stage_files;
}

const std::array<Framework, 8>& frameworks() {
  static const std::array<Framework, 8> kFrameworks = {{
      {{"megatron-lm-2021",
        "Megatron-LM as Narayanan et al. ran it (SC'21): its own DDP, one gradient all-reduce "
        "after the backward in the training dtype, autograd summing micro-batches, attention "
        "scores materialized, FP32 cross-entropy, the embedding's output copied to "
        "sequence-first",
        "github.com/NVIDIA/Megatron-LM (BSD-3) v2.x arguments.py defaults: "
        "--use-contiguous-buffers-in-ddp, --accumulate-allreduce-grads-in-fp32 and "
        "--fp16-lm-cross-entropy off; no FlashAttention; the [b s h] -> [s b h] "
        "transpose(0, 1).contiguous() of the first stage's input"},
       megatron_2021_training},
      {{"megatron-deepspeed",
        "Megatron-DeepSpeed with DeepSpeed's FP16 engine and no ZeRO, as vTrain measured it: the "
        "same step as megatron-lm-2021, its 1F1B pipelines in DeepSpeed's TrainSchedule "
        "(pipeline_exchange DEEPSPEED: each transfer issued alone and waited for by both sides, "
        "a forward's send one step late)",
        "github.com/microsoft/Megatron-DeepSpeed (MIT); github.com/deepspeedai/DeepSpeed "
        "(Apache-2.0) deepspeed/runtime/pipe/schedule.py; vTrain (Bang et al., MICRO'24, "
        "github.com/VIA-Research/vTrain, MIT)"},
       megatron_deepspeed_training},
      {{"megatron-bridge",
        "Megatron-Core as NVIDIA's NeMo 2 / Megatron-Bridge performance recipes configure it: "
        "distributed optimizer (its parameter gather under the next forward), gradients reduced in "
        "BF16 in 128 Mi-element buckets (the first stage's first chunk bucketed, every other "
        "chunk one bucket; with virtual stages each chunk's launched whole, aligned over the "
        "stages), pipeline sends overlapped with compute where there are virtual "
        "stages, "
        "gradient accumulation fused in the weight-gradient GEMMs, FlashAttention, fused "
        "cross-entropy, the embedding's output copied to sequence-first, TP communication "
        "overlapped where sequence parallelism allows it, "
        "experts' GEMMs as Transformer Engine's GroupedLinear runs them (a cuBLAS GEMM per "
        "expert on four streams), FP8 with current scaling and FP8 parameters",
        "github.com/NVIDIA-NeMo/Megatron-Bridge (Apache-2.0) performance recipes: "
        "use_distributed_optimizer, overlap_grad_reduce, overlap_param_gather, grad_reduce_in_fp32 "
        "false; github.com/NVIDIA/Megatron-LM (BSD-3) megatron/core/distributed/"
        "distributed_data_parallel.py (no buckets after the first stage's first chunk), "
        "pipeline_parallel/schedules.py (param_sync_func, grad_sync_func); Megatron-Bridge "
        "comm_overlap.py (bucket_size 128 Mi, align_param_gather) and "
        "dist_config.align_grad_reduce; overlap_p2p_comm with virtual pipeline "
        "stages (CommOverlapConfig), "
        "gradient_accumulation_fusion, tp_comm_overlap, cross_entropy_loss_fusion; "
        "megatron/core/models/common/embeddings/language_model_embedding.py (the "
        "transpose(0, 1).contiguous() to [s b h]); "
        "moe_grouped_gemm through Transformer Engine (github.com/NVIDIA/TransformerEngine, "
        "Apache-2.0, transformer_engine/common/gemm/cublaslt_gemm.cu multi_stream_cublas_gemm); "
        "FP8 as fp8_cs "
        "(bf16_with_fp8_current_scaling_mixed: tensorwise scaling, fp8_param_gather)"},
       megatron_bridge_training},
      {{"deepspeed-zero1",
        "DeepSpeed's engine with ZeRO stage 1: optimizer states sharded, gradients "
        "reduce-scattered at the accumulation boundary on the compute stream, not overlapped "
        "with the backward (DeepSpeed in 5e8-element buckets, racksim as one reduction of the "
        "same bytes)",
        deepspeed_source(kStageOneAndTwo)},
       deepspeed_zero1_training},
      {{"deepspeed-zero2",
        "DeepSpeed's engine with ZeRO stage 2: gradients sharded too, so every micro-batch's "
        "gradients are reduce-scattered on the compute stream (overlap_comm off by default)",
        deepspeed_source(kStageOneAndTwo)},
       deepspeed_zero2_training},
      {{"deepspeed-zero3",
        "DeepSpeed's engine with ZeRO stage 3: parameters sharded and gathered layer by layer, "
        "every micro-batch's gradients reduce-scattered during the backward",
        deepspeed_source("stage3.py (parameters fetched per module ahead of use, "
                         "stage3_prefetch_bucket_size)")},
       deepspeed_zero3_training},
      {{"pytorch-fsdp",
        "PyTorch FSDP with FULL_SHARD: parameters gathered per layer one layer ahead, every "
        "micro-batch's gradients reduce-scattered during the backward in the parameters' dtype",
        "pytorch.org/docs/stable/fsdp.html (BSD-3): ShardingStrategy.FULL_SHARD, "
        "BackwardPrefetch.BACKWARD_PRE, MixedPrecision.reduce_dtype"},
       pytorch_fsdp_training},
      {{"hai-llm",
        "DeepSeek's HAI-LLM as DeepSeek-V3 was trained: DualPipe over an even number of "
        "stages, ZeRO-1, AdamW's moments in BF16, gradients in FP32, MoE dispatch in FP8 under "
        "FP8 training",
        "DeepSeek-AI, DeepSeek-V3 Technical Report (arXiv 2412.19437), sections 3.2 (DualPipe, "
        "ZeRO-1, no TP) and 3.3 (BF16 moments, FP32 gradients, FP8 dispatch)"},
       hai_llm_training},
  }};
  return kFrameworks;
}

const Framework* find_framework(std::string_view name) {
  const auto& all = frameworks();
  const auto it = std::find_if(all.begin(), all.end(),
                               [&](const Framework& f) { return f.preset.name == name; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace

std::optional<FrameworkPreset> framework_preset(std::string_view name) {
  const Framework* framework = find_framework(name);
  if (framework == nullptr) return std::nullopt;
  return framework->preset;
}

std::vector<std::string> framework_preset_names() {
  std::vector<std::string> names;
  for (const Framework& f : frameworks()) names.push_back(f.preset.name);
  return names;
}

std::optional<config::Training> framework_training(std::string_view name,
                                                   const config::Scenario& scenario) {
  const Framework* framework = find_framework(name);
  if (framework == nullptr) return std::nullopt;
  return framework->training(scenario);
}

std::optional<std::string> deepspeed_exchange_refusal(const config::Scenario& scenario) {
  const Training& training = scenario.training();
  const auto schedule = training.schedule();
  if (schedule != Training::SCHEDULE_UNSPECIFIED && schedule != Training::ONE_F_ONE_B) {
    return fmt::format(
        "DEEPSPEED is DeepSpeed's TrainSchedule, a 1F1B: it needs "
        "training.schedule ONE_F_ONE_B (the schedule is {})",
        Training::Schedule_Name(schedule));
  }
  if (training.pp_comm_overlap()) {
    return "DEEPSPEED blocks on every transfer, as DeepSpeed's engine does; it does not combine "
           "with training.pp_comm_overlap true";
  }
  if (scenario.model().mtp_depth() > 0) {
    return "DeepSpeed's pipeline engine has no multi-token-prediction modules; model.mtp_depth "
           "must be 0 with DEEPSPEED";
  }
  return std::nullopt;
}

}  // namespace racksim
