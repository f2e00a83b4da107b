// Data parallelism for one rank: how gradients are reduced across data-parallel replicas, how
// the optimizer's work is shared, and (ZeRO-3) how sharded parameters are gathered before use.
//
//   ZeRO 0: gradients all-reduced; every replica runs the full optimizer.
//   ZeRO 1 (Megatron's distributed optimizer): gradients reduce-scattered, each replica
//           updates its 1/dp shard, updated parameters all-gathered: 2x the parameters on the
//           wire per step, the same as an all-reduce, with the optimizer work divided by dp.
//   ZeRO 2: as ZeRO 1, but a replica keeps only its shard of the gradients, so every
//           micro-batch's gradients are reduce-scattered before the next one adds to them
//           (DeepSpeed's stage_1_and_2.py reduces at every micro-step when it partitions
//           gradients, at the accumulation boundary only under stage 1; FSDP's SHARD_GRAD_OP
//           likewise): (micro-batches + 1) x the parameters per step. Without overlap_grad_reduce
//           the reduction runs on the compute stream (DeepSpeed's overlap_comm false, its default
//           below stage 3) and the next kernel waits for it.
//   ZeRO 3 (FSDP): parameters all-gathered before each layer's forward and again before its
//           backward, gradients reduce-scattered after it: 3x the parameters per micro-batch.
// Reductions run either once after the last backward or, with overlap_grad_reduce, in buckets
// launched as soon as the last micro-batch's backward has produced a bucket's gradients (under
// ZeRO 2: every micro-batch's).
#pragma once

#include <vector>

#include "workloads/training/rank_writer.h"

namespace racksim {

struct GradientSyncConfig {
  int zero_stage = 0;
  bool overlap = false;
  // ZeRO-1/2: the updated parameters' all-gather under the first micro-batch's forward, layer by
  // layer (Megatron's overlap_param_gather), instead of after the update.
  bool overlap_param_gather = false;
  // Megatron-Core's buckets (training.bucket_first_chunk_only): only the first stage's first
  // chunk is bucketed; every other chunk is reduced, and gathered, whole.
  bool bucket_first_chunk_only = false;
  // With overlap and virtual stages (training.align_grad_reduce): a chunk's reduction waits, held,
  // until release_held launches it whole.
  bool align_grad_reduce = false;
  int chunks = 1;  // model chunks on the rank
  double bucket_elements = 40e6;
  double grad_bytes = 4;         // per gradient element on the wire
  double param_bytes = 2;        // per parameter element on the wire (gathers)
  double table_param_bytes = 2;  // the same for the vocabulary tables (BF16 under FP8 parameters)
  // FP8 parameters (training.fp8_param_gather): the optimizer casts its FP32 shard of the GEMMs'
  // weights to FP8 instead of writing a BF16 copy; with current scaling (fp8_current_scaling) an
  // amax pass and an all-reduce of the amaxes come first.
  bool fp8_params = false;
  bool fp8_current_scaling = false;
  double moment_bytes = 4;  // per element of each of AdamW's moments
  int dp = 1;               // replicas sharing the parameters (data x context parallel)
  CommId dp_comm = 0;
  int expert_dp = 1;  // replicas sharing the rank's experts
  CommId expert_comm = 0;
  // Before the optimizer (mixed precision, as Megatron's optimizer does it): FP16 gradients are
  // unscaled and checked for inf/NaN (loss scaling), and clipping computes the global norm; each
  // result is all-reduced over the model-parallel group.
  bool unscale_fp16 = false;
  bool clip_grad_norm = false;
  // The ranks the gradient checks' scalars are all-reduced over: the model-parallel group
  // (TP x PP), or every rank under a sharded optimizer.
  int check_ranks = 1;
  CommId check_comm = 0;
  CommDim check_dim = CommDim::kPp;  // what a wait for it is charged to
  StreamId stream = 0;
  // Optimizer offload: gradients to host memory (NUMA node `numa_node` of the rank's server),
  // the CPU updates at cpu_params_per_s, parameters back to the GPU.
  bool offload = false;
  double cpu_params_per_s = 0;
  uint32_t numa_node = 0;
  StreamId to_host = 0;
  StreamId to_device = 0;
  StreamId host = 0;
};

// Parameters of a block on this rank: the dense ones (replicated over data x context parallel
// ranks) and the routed experts' (replicated over the expert-data-parallel ranks).
struct RankParams {
  double dense = 0;
  double expert = 0;
  double tables = 0;  // of `dense`: the vocabulary tables, which FP8 recipes keep in BF16
  double total() const { return dense + expert; }
  RankParams& operator+=(const RankParams& other) {
    dense += other.dense;
    expert += other.expert;
    tables += other.tables;
    return *this;
  }
};

class GradientSync {
 public:
  GradientSync(RankWriter* writer, GradientSyncConfig config);

  bool gathers_parameters() const { return config_.zero_stage >= 3 && config_.dp > 1; }
  // ZeRO-1/2 with overlap_param_gather: the update's all-gather waits for each layer's first
  // forward instead of ending the step.
  bool gathers_updated_parameters_in_forward() const {
    return config_.overlap_param_gather && (config_.zero_stage == 1 || config_.zero_stage == 2);
  }
  // Under bucket_first_chunk_only, where the gather above takes whole chunks but the first
  // stage's first one (issue_chunk_gather).
  bool gathers_chunks_whole() const {
    return gathers_updated_parameters_in_forward() && config_.bucket_first_chunk_only;
  }

  // The passes written next are of a model chunk that is (`first_of_model`) or is not the first
  // stage's first chunk: whether its gradients are bucketed (bucket_first_chunk_only).
  void begin_chunk(int local_chunk, bool first_of_model);

  // align_grad_reduce: launches the reduction held for `local_chunk` since its last backward,
  // after the chain's work so far.
  void release_held(int local_chunk, ComputeChain& chain, const OpTag& tag);

  // The all-gather of one whole chunk's updated parameters, issued after `deps`; the chunk's
  // first forward waits for the ids returned.
  std::vector<OpId> issue_chunk_gather(const RankParams& params, const std::vector<OpId>& deps,
                                       const OpTag& tag);

  // ZeRO-3: gathers the parameters of one layer before the chain's next kernel. The gather is
  // issued when the previous layer started (`prefetch_after`, or at once if kNoOp), one layer
  // ahead, as FSDP prefetches.
  void gather_parameters(ComputeChain& chain, const RankParams& params, OpId prefetch_after,
                         const OpTag& tag);

  // The gradients of `params` parameters have been computed by `ready` for one micro-batch;
  // `final` when no later micro-batch adds to them.
  void gradients_ready(const RankParams& params, OpId ready, bool final, const OpTag& tag);

  // The end of one backward pass over a chunk (its weight gradients included). ZeRO-2 reduces
  // what the pass left in its buckets; with no overlap the chain's next kernel waits for it.
  // After the chunk's `final` pass, overlapped reduction sends the chunk's last bucket (each
  // chunk has a buffer of its own).
  void backward_done(ComputeChain& chain, const OpTag& tag, bool final);

  // After the schedule: the remaining reductions, the optimizer step (of this rank's share of
  // `rank_params`), and the all-gather of updated parameters under ZeRO 1/2.
  void finish(ComputeChain& chain, StreamId compute_stream, const RankParams& rank_params);

  // Parameters this rank's optimizer updates.
  double optimizer_params(const RankParams& rank_params) const;

 private:
  struct Group {
    int size = 1;
    CommId comm = 0;
    double bucket = 0;  // parameters waiting in the open bucket
  };
  // Bytes an all-gather of `params` moves per rank, per group.
  double gather_bytes(const RankParams& params, const Group& group) const;
  void add_to_bucket(Group& group, double params, OpId ready, const OpTag& tag);
  void flush_bucket(Group& group, const std::vector<OpId>& ready, const OpTag& tag);
  CollectiveKind reduction() const;
  bool reduces_every_micro_batch() const { return config_.zero_stage == 2; }
  // align_grad_reduce in effect: overlapped reductions of several chunks, none of them ZeRO-2's.
  bool holds_reductions() const;
  void offloaded_step(ComputeChain& chain, double params, const OpTag& tag);
  // The update on the GPU: AdamW over the rank's share, then, with FP8 parameters, the cast of
  // the GEMMs' weights in it (`gemm_params`).
  void update(ComputeChain& chain, StreamId compute_stream, double params, double gemm_params,
              const OpTag& tag);
  void gradient_checks(ComputeChain& chain, StreamId compute_stream, double params,
                       const OpTag& tag);

  RankWriter* writer_;
  GradientSyncConfig config_;
  Group dense_;
  Group experts_;
  bool bucketed_ = true;  // the current chunk splits its gradients into buckets
  int chunk_ = 0;         // the current chunk
  // align_grad_reduce: per chunk, the dense and expert parameters whose reduction is held.
  std::vector<RankParams> held_;
  std::vector<OpId> reductions_;
};

}  // namespace racksim
