#include "workloads/training/gradient_sync.h"

#include <algorithm>

namespace racksim {

namespace {

// Mixed-precision AdamW per parameter: reads the FP32 master weight, both moments and the FP32
// gradient, writes master weight and moments and the BF16 copy: 14 + 4 x the moment's bytes (30
// with FP32 moments).
double adam_bytes_per_param(double moment_bytes) {
  return 14 + 4 * moment_bytes;
}
constexpr double kAdamFlopsPerParam = 12;
// The gradient checks: unscaling and the inf/NaN test read and write the FP32 gradients; the
// norm reads them. One FP32 scalar per check crosses the model-parallel group.
constexpr double kUnscaleBytesPerParam = 8;
constexpr double kNormBytesPerParam = 4;
constexpr double kCheckFlopsPerParam = 2;
constexpr double kScalarBytes = 4;

}  // namespace

GradientSync::GradientSync(RankWriter* writer, GradientSyncConfig config)
    : writer_(writer), config_(config), held_(static_cast<size_t>(std::max(1, config.chunks))) {
  dense_.size = config.dp;
  dense_.comm = config.dp_comm;
  experts_.size = config.expert_dp;
  experts_.comm = config.expert_comm;
}

CollectiveKind GradientSync::reduction() const {
  return config_.zero_stage >= 1 ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
}

double GradientSync::optimizer_params(const RankParams& p) const {
  if (config_.zero_stage < 1) return p.total();
  return p.dense / config_.dp + p.expert / config_.expert_dp;
}

void GradientSync::begin_chunk(int local_chunk, bool first_of_model) {
  chunk_ = local_chunk;
  bucketed_ = !config_.bucket_first_chunk_only || first_of_model;
}

bool GradientSync::holds_reductions() const {
  return config_.align_grad_reduce && config_.overlap && config_.chunks > 1 &&
         !reduces_every_micro_batch();
}

void GradientSync::release_held(int local_chunk, ComputeChain& chain, const OpTag& tag) {
  RankParams& held = held_.at(static_cast<size_t>(local_chunk));
  dense_.bucket += held.dense;
  experts_.bucket += held.expert;
  held = {};
  for (Group* g : {&dense_, &experts_}) flush_bucket(*g, chain.inputs(), tag);
}

double GradientSync::gather_bytes(const RankParams& params, const Group& group) const {
  if (&group == &experts_) return params.expert * config_.param_bytes;
  return (params.dense - params.tables) * config_.param_bytes +
         params.tables * config_.table_param_bytes;
}

std::vector<OpId> GradientSync::issue_chunk_gather(const RankParams& params,
                                                   const std::vector<OpId>& deps,
                                                   const OpTag& tag) {
  std::vector<OpId> gathers;
  for (const Group* g : {&dense_, &experts_}) {
    const double bytes = gather_bytes(params, *g);
    if (bytes <= 0 || g->size <= 1) continue;
    gathers.push_back(writer_->detached_collective(config_.stream, "params.allgather",
                                                   CollectiveKind::kAllGather, g->comm, bytes,
                                                   CommDim::kDp, tag, deps));
  }
  return gathers;
}

void GradientSync::gather_parameters(ComputeChain& chain, const RankParams& params,
                                     OpId prefetch_after, const OpTag& tag) {
  // FSDP gathers before every use; a sharded optimizer with overlap_param_gather before the
  // first micro-batch's forward of each layer (the gather of the update that ended the step
  // before), unless the chunk is gathered whole.
  const bool first_forward = tag.phase == Phase::kForward && tag.micro_batch == 0;
  const bool layer_by_layer = !gathers_chunks_whole() || bucketed_;
  if (!gathers_parameters() &&
      !(gathers_updated_parameters_in_forward() && first_forward && layer_by_layer)) {
    return;
  }
  std::vector<OpId> deps;
  if (prefetch_after != kNoOp) deps.push_back(prefetch_after);
  const std::vector<OpId> gathers = issue_chunk_gather(params, deps, tag);
  chain.pending.insert(chain.pending.end(), gathers.begin(), gathers.end());
}

void GradientSync::gradients_ready(const RankParams& params, OpId ready, bool final,
                                   const OpTag& tag) {
  for (Group* g : {&dense_, &experts_}) {
    const double p = g == &dense_ ? params.dense : params.expert;
    if (p <= 0 || g->size <= 1) continue;
    if (gathers_parameters()) {
      // FSDP keeps no full gradient: every backward reduce-scatters its layer's gradients.
      reductions_.push_back(writer_->detached_collective(
          config_.stream, "grad.reducescatter", CollectiveKind::kReduceScatter, g->comm,
          p * config_.grad_bytes, CommDim::kDp, tag, {ready}));
    } else if (final || reduces_every_micro_batch()) {
      add_to_bucket(*g, p, ready, tag);
    }
  }
}

void GradientSync::add_to_bucket(Group& group, double params, OpId ready, const OpTag& tag) {
  group.bucket += params;
  if (config_.overlap && bucketed_ && !holds_reductions() &&
      group.bucket >= config_.bucket_elements) {
    flush_bucket(group, {ready}, tag);
  }
}

void GradientSync::flush_bucket(Group& group, const std::vector<OpId>& ready, const OpTag& tag) {
  if (group.bucket <= 0) return;
  const char* name =
      reduction() == CollectiveKind::kAllReduce ? "grad.allreduce" : "grad.reducescatter";
  reductions_.push_back(writer_->detached_collective(config_.stream, name, reduction(), group.comm,
                                                     group.bucket * config_.grad_bytes,
                                                     CommDim::kDp, tag, ready));
  group.bucket = 0;
}

void GradientSync::backward_done(ComputeChain& chain, const OpTag& tag, bool final) {
  if (final && holds_reductions()) {
    RankParams& held = held_.at(static_cast<size_t>(chunk_));
    held.dense += dense_.bucket;
    held.expert += experts_.bucket;
    dense_.bucket = experts_.bucket = 0;
    return;
  }
  if (!reduces_every_micro_batch() && !(final && config_.overlap)) return;
  for (Group* g : {&dense_, &experts_}) {
    if (g->bucket <= 0) continue;
    flush_bucket(*g, chain.inputs(), tag);
    if (!config_.overlap) chain.pending.push_back(reductions_.back());
  }
}

void GradientSync::finish(ComputeChain& chain, StreamId compute_stream,
                          const RankParams& rank_params) {
  const OpTag tag{Phase::kOptimizer, -1, -1};
  // The last buckets (and the held reductions no backward pass released); without overlap, the
  // single reduction of all gradients after everything the step computed.
  for (size_t c = 0; c < held_.size(); ++c) release_held(static_cast<int>(c), chain, tag);
  for (Group* g : {&dense_, &experts_}) flush_bucket(*g, chain.inputs(), tag);
  chain.pending.insert(chain.pending.end(), reductions_.begin(), reductions_.end());
  reductions_.clear();
  const double params = optimizer_params(rank_params);
  if (config_.offload) {
    offloaded_step(chain, params, tag);
  } else {
    gradient_checks(chain, compute_stream, params, tag);
    // The optimizer's share of the tables, sharded as the rest of the dense parameters.
    const double tables = optimizer_params({rank_params.tables, 0});
    update(chain, compute_stream, params, params - tables, tag);
  }
  if ((config_.zero_stage == 1 || config_.zero_stage == 2) &&
      !gathers_updated_parameters_in_forward()) {
    for (Group* g : {&dense_, &experts_}) {
      const double bytes = gather_bytes(rank_params, *g);
      if (bytes <= 0 || g->size <= 1) continue;
      writer_->collective(chain, config_.stream, "params.allgather", CollectiveKind::kAllGather,
                          g->comm, bytes, CommDim::kDp, tag);
    }
  }
}

// Megatron's mixed-precision optimizer before the update: with FP16 (loss scaling) the gradients
// are unscaled and checked for inf/NaN in one pass, with clipping a second pass sums their
// squares. Each pass's result is all-reduced over the model-parallel group (every rank under a
// sharded optimizer), so every pipeline stage waits there for the slowest before it updates.
void GradientSync::gradient_checks(ComputeChain& chain, StreamId compute_stream, double params,
                                   const OpTag& tag) {
  auto check = [&](const char* kernel, double bytes_per_param, const char* reduction_name) {
    writer_->kernel(chain, compute_stream,
                    compute_step(kernel, OpClass::kElementwise, params * kCheckFlopsPerParam,
                                 params * bytes_per_param),
                    tag);
    if (config_.check_ranks <= 1) return;
    writer_->collective(chain, config_.stream, reduction_name, CollectiveKind::kAllReduce,
                        config_.check_comm, kScalarBytes, config_.check_dim, tag);
  };
  if (config_.unscale_fp16) check("optimizer.unscale", kUnscaleBytesPerParam, "grad.found_inf");
  if (config_.clip_grad_norm) check("optimizer.grad_norm", kNormBytesPerParam, "grad.norm");
}

void GradientSync::update(ComputeChain& chain, StreamId compute_stream, double params,
                          double gemm_params, const OpTag& tag) {
  // With FP8 parameters the GEMMs' weights get no BF16 copy (2 B of adam_bytes_per_param).
  const double fp8 = config_.fp8_params ? gemm_params : 0;
  writer_->kernel(chain, compute_stream,
                  compute_step("optimizer.adam", OpClass::kElementwise, params * kAdamFlopsPerParam,
                               params * adam_bytes_per_param(config_.moment_bytes) - 2 * fp8),
                  tag);
  if (fp8 <= 0) return;
  // Transformer Engine's cast of the master shards (cast_master_weights_to_fp8): under current
  // scaling the amax of each shard (a read of its FP32 values) and a MAX all-reduce of the packed
  // amaxes over the data-parallel group (a few hundred bytes: counted as one scalar), then the
  // cast itself, 4 B read and 1 B written per parameter.
  if (config_.fp8_current_scaling) {
    writer_->kernel(
        chain, compute_stream,
        compute_step("optimizer.fp8_param_amax", OpClass::kElementwise, fp8, kFp32Bytes * fp8),
        tag);
    if (config_.dp > 1) {
      writer_->collective(chain, config_.stream, "optimizer.fp8_param_amax.allreduce",
                          CollectiveKind::kAllReduce, config_.dp_comm, kScalarBytes, CommDim::kDp,
                          tag);
    }
  }
  writer_->kernel(
      chain, compute_stream,
      compute_step("optimizer.fp8_param_cast", OpClass::kElementwise, fp8, (kFp32Bytes + 1) * fp8),
      tag);
}

void GradientSync::offloaded_step(ComputeChain& chain, double params, const OpTag& tag) {
  EventGraph& g = writer_->graph();
  auto context = [&](StreamId stream) { return writer_->context(stream, tag); };
  const OpId down =
      g.add_copy(context(config_.to_host), "optimizer.grads_to_host", CopyDirection::kDeviceToHost,
                 config_.numa_node, params * config_.grad_bytes, chain.inputs());
  const double cpu_s = config_.cpu_params_per_s > 0 ? params / config_.cpu_params_per_s : 0;
  const OpId adam = g.add_recorded_compute(
      context(config_.host), "optimizer.cpu_adam", cpu_s, params * kAdamFlopsPerParam,
      params * adam_bytes_per_param(config_.moment_bytes), std::vector<OpId>{down});
  const OpId up = g.add_copy(context(config_.to_device), "optimizer.params_to_device",
                             CopyDirection::kHostToDevice, config_.numa_node,
                             params * config_.param_bytes, std::vector<OpId>{adam});
  chain.pending.assign(1, up);
}

}  // namespace racksim
