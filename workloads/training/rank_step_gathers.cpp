// When Megatron-Core's data-parallel communication of a whole chunk is issued.
//
// Parameter gathers (training.bucket_first_chunk_only with overlap_param_gather): a chunk other
// than the first stage's first is one bucket, so the optimizer's update reaches it in one
// all-gather, which its first forward waits for. Where the gather is issued follows Megatron-Core
// (github.com/NVIDIA/Megatron-LM, BSD-3):
// - without virtual stages nothing issues it early: the forward's first hook does
//   (finish_param_sync), after the pass's receive;
// - the interleaved schedule issues chunks 0 and 1 before its first pass and chunk c as the rank
//   reaches the forward pass pipeline-rank passes before chunk c - 1's first
//   (pipeline_parallel/schedules.py, param_sync_func), so that every stage issues it together.
#include <algorithm>

#include "workloads/training/rank_step.h"

namespace racksim {

namespace {

const OpTag kGatherTag{Phase::kForward, 0, -1};

// Issued when the rank's work before the pass is done; at the step's start before any.
std::vector<OpId> after(OpId before) {
  return before == kNoOp ? std::vector<OpId>{} : std::vector<OpId>{before};
}

}  // namespace

RankParams RankStep::chunk_params(int local_chunk) const {
  const ChunkRef chunk{coords_.pp, local_chunk};
  RankParams params;
  const LayerRange layers = s_.plan.map.layers(chunk);
  for (int l = layers.first; l < layers.first + layers.count; ++l) params += layer_params(l);
  if (s_.plan.map.starts_route(chunk)) params += block_params(s_.embedding);
  if (s_.plan.map.runs_standalone_mtp(chunk)) params += block_params(s_.mtp);
  if (s_.plan.map.ends_route(chunk)) params += block_params(s_.head);
  return params;
}

void RankStep::plan_chunk_gathers(const PassOrder& order) {
  if (!sync_.gathers_chunks_whole()) return;
  const int chunks = s_.plan.map.chunks_per_stage();
  gather_due_at_.assign(chunks, kIssuedByItsForward);
  chunk_gather_.assign(chunks, {});
  gather_issued_.assign(chunks, false);
  gather_waited_.assign(chunks, false);
  if (chunks == 1) return;
  std::vector<int> first_forward(chunks, -1);
  int forwards = 0;
  for (const PipelinePass& pass : order) {
    if (pass.kind != PassKind::kForward) continue;
    if (first_forward[pass.local_chunk] < 0) first_forward[pass.local_chunk] = forwards;
    ++forwards;
  }
  for (int c = 0; c < chunks; ++c) {
    if (first_of_model(c)) continue;  // bucketed, gathered layer by layer (write_forward)
    gather_due_at_[c] = c < 2 ? 0 : std::max(0, first_forward[c - 1] - coords_.pp);
  }
}

void RankStep::issue_chunk_gather(int local_chunk, const std::vector<OpId>& deps) {
  chunk_gather_[local_chunk] =
      sync_.issue_chunk_gather(chunk_params(local_chunk), deps, kGatherTag);
  gather_issued_[local_chunk] = true;
}

void RankStep::wait_for_chunk_gather(const Visit& v, OpId before) {
  const int c = v.pass.local_chunk;
  if (chunk_gather_.empty() || first_of_model(c) || gather_waited_[c]) return;
  if (!gather_issued_[c]) {
    issue_chunk_gather(c,
                       gather_due_at_[c] == forwards_written_ ? after(before) : v.chain.inputs());
  }
  v.chain.pending.insert(v.chain.pending.end(), chunk_gather_[c].begin(), chunk_gather_[c].end());
  gather_waited_[c] = true;
}

void RankStep::issue_due_chunk_gathers(OpId before) {
  for (size_t c = 0; c < chunk_gather_.size(); ++c) {
    if (!gather_issued_[c] && gather_due_at_[c] == forwards_written_) {
      issue_chunk_gather(static_cast<int>(c), after(before));
    }
  }
  ++forwards_written_;
}

// Reductions (training.align_grad_reduce, virtual stages): the interleaved schedule launches a
// chunk's reduction after the backward pass pipeline-rank passes after the chunk's last
// (grad_sync_func in backward_step_helper), and the rest after the schedule.
void RankStep::plan_aligned_reductions(const PassOrder& order) {
  reductions_after_.clear();
  const int chunks = s_.plan.map.chunks_per_stage();
  if (!s_.plan.training.align_grad_reduce || chunks == 1) return;
  std::vector<int> last_backward(chunks, -1);
  int backwards = 0;
  for (const PipelinePass& pass : order) {
    if (pass.kind == PassKind::kBackwardInput) continue;  // the weight pass ends the chunk's work
    if (pass.kind != PassKind::kForward) last_backward[pass.local_chunk] = backwards++;
  }
  reductions_after_.assign(backwards, {});
  for (int c = 0; c < chunks; ++c) {
    const int due = last_backward[c] + coords_.pp;
    if (last_backward[c] >= 0 && due < backwards) reductions_after_[due].push_back(c);
  }
}

void RankStep::release_due_reductions(const Visit& v) {
  if (v.pass.kind == PassKind::kBackwardInput) return;
  const int index = backwards_written_++;
  if (index >= static_cast<int>(reductions_after_.size())) return;
  for (int c : reductions_after_[index]) {
    sync_.release_held(c, v.chain, {Phase::kBackward, v.pass.micro_batch, -1});
  }
}

}  // namespace racksim
