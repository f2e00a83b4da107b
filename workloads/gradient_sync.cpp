#include "workloads/gradient_sync.h"

namespace racksim {

namespace {

// Mixed-precision AdamW per parameter: reads the FP32 master weight, both moments and the FP32
// gradient (16 bytes), writes master weight and moments and the BF16 copy (14 bytes).
constexpr double kAdamBytesPerParam = 30;
constexpr double kAdamFlopsPerParam = 12;

}  // namespace

GradientSync::GradientSync(RankWriter* writer, GradientSyncConfig config)
    : writer_(writer), config_(config) {}

CollectiveKind GradientSync::reduction() const {
  return config_.zero_stage >= 1 ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
}

double GradientSync::optimizer_params(double rank_params) const {
  return config_.zero_stage >= 1 ? rank_params / config_.dp : rank_params;
}

void GradientSync::gather_parameters(ComputeChain& chain, double params, OpId prefetch_after,
                                     const OpTag& tag) {
  if (!gathers_parameters()) return;
  std::vector<OpId> deps;
  if (prefetch_after != kNoOp) deps.push_back(prefetch_after);
  const OpId gather = writer_->detached_collective(
      config_.stream, "params.allgather", CollectiveKind::kAllGather, config_.dp_comm,
      params * config_.param_bytes, CommDim::kDp, tag, deps);
  chain.pending.push_back(gather);
}

void GradientSync::gradients_ready(double params, OpId ready, bool final, const OpTag& tag) {
  if (config_.dp <= 1) return;
  if (gathers_parameters()) {
    // FSDP keeps no full gradient: every backward reduce-scatters its layer's gradients.
    reductions_.push_back(writer_->detached_collective(
        config_.stream, "grad.reducescatter", CollectiveKind::kReduceScatter, config_.dp_comm,
        params * config_.grad_bytes, CommDim::kDp, tag, {ready}));
    return;
  }
  if (!final) return;
  bucket_params_ += params;
  if (config_.overlap && bucket_params_ >= config_.bucket_elements) flush_bucket({ready}, tag);
}

void GradientSync::flush_bucket(const std::vector<OpId>& ready, const OpTag& tag) {
  if (bucket_params_ <= 0) return;
  const char* name = reduction() == CollectiveKind::kAllReduce ? "grad.allreduce" : "grad.reducescatter";
  reductions_.push_back(writer_->detached_collective(config_.stream, name, reduction(),
                                                     config_.dp_comm,
                                                     bucket_params_ * config_.grad_bytes,
                                                     CommDim::kDp, tag, ready));
  bucket_params_ = 0;
}

void GradientSync::finish(ComputeChain& chain, StreamId compute_stream, double rank_params) {
  const OpTag tag{Phase::kOptimizer, -1, -1};
  // The last bucket; without overlap, the single reduction of all gradients after everything
  // the step computed.
  flush_bucket(chain.inputs(), tag);
  chain.pending.insert(chain.pending.end(), reductions_.begin(), reductions_.end());
  reductions_.clear();
  const double params = optimizer_params(rank_params);
  LayerStep adam = compute_step("optimizer.adam", OpClass::kElementwise, params * kAdamFlopsPerParam,
                                params * kAdamBytesPerParam);
  writer_->kernel(chain, compute_stream, adam, tag);
  if (config_.dp > 1 && (config_.zero_stage == 1 || config_.zero_stage == 2)) {
    writer_->collective(chain, config_.stream, "params.allgather", CollectiveKind::kAllGather,
                        config_.dp_comm, rank_params * config_.param_bytes, CommDim::kDp, tag);
  }
}

}  // namespace racksim
