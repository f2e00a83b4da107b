// Transformer Engine's tensor-parallel communication overlap (training.tp_comm_overlap): the
// collective beside a linear layer's GEMM runs while the GEMM works, the three ways its
// userbuffers do it by default (initialize_ub in transformer_engine/pytorch/module/base.py,
// Apache-2.0): ring exchange for the all-gathers before qkv and fc1 and before proj's and fc2's
// input gradients; pipeline for the reduce-scatters after proj and fc2; bulk for the
// reduce-scatters of qkv's and fc1's input gradients, under their weight-gradient GEMMs.
#include <utility>

#include "workloads/training/rank_step.h"

namespace racksim {

namespace {

// Transformer Engine's pipeline overlap cuts the GEMM before a reduce-scatter in 4 (num_splits).
constexpr int kPipelineChunks = 4;

bool is_tp_collective(const LayerStep& step, CollectiveKind kind) {
  return step.kind == LayerStep::Kind::kCollective && step.dim == CommDim::kTp &&
         step.forward == kind;
}

// A Transformer Engine linear layer's GEMM (fp8_linear marks them: the output layer and
// attention's own products are not).
bool is_te_linear(const LayerStep& step) {
  return step.kind == LayerStep::Kind::kCompute && step.op_class == OpClass::kGemm &&
         step.fp8_linear && step.shape.known();
}

bool splits_into_gradients(const LayerStep& gemm) {
  return gemm.shape.pass == GemmPass::kBackward && gemm.input_grad_factor > 0 &&
         gemm.weight_grad_factor > 0;
}

}  // namespace

void RankStep::write_fp8_amax_reduction(ComputeChain& chain, const PassStreams& streams,
                                        const std::vector<LayerStep>& steps, size_t i,
                                        const OpTag& tag) {
  // Transformer Engine sets with_amax_reduction over the TP group on the quantizers of these
  // operands: the column-parallel layers' input and the row-parallel layers' output gradient
  // under sequence parallelism (transformer_engine/pytorch/module/linear.py, Apache-2.0).
  if (i + 1 >= steps.size() || !is_tp_collective(steps[i], CollectiveKind::kAllGather) ||
      !is_te_linear(steps[i + 1])) {
    return;
  }
  writer_.collective(chain, streams.tp, steps[i + 1].name + ".fp8_amax_allreduce",
                     CollectiveKind::kAllReduce, tp_comm_, kFp32Bytes, CommDim::kTp, tag);
}

size_t RankStep::write_tp_overlap(ComputeChain& chain, const PassStreams& streams,
                                  const std::vector<LayerStep>& steps, size_t i, const OpTag& tag,
                                  OpId* first) {
  if (!tp_overlap_ || i + 1 >= steps.size()) return 0;
  const LayerStep& a = steps[i];
  const LayerStep& b = steps[i + 1];
  if (is_tp_collective(a, CollectiveKind::kAllGather) && is_te_linear(b) &&
      (b.shape.pass != GemmPass::kBackward || splits_into_gradients(b))) {
    *first = write_ring_exchange(chain, streams, a, b, tag);
    return 2;
  }
  if (is_te_linear(a) && is_tp_collective(b, CollectiveKind::kReduceScatter)) {
    if (a.shape.pass == GemmPass::kForward) {
      *first = write_pipelined_scatter(chain, streams, a, b, tag);
      return 2;
    }
    if (splits_into_gradients(a)) {
      *first = write_bulk_scatter(chain, streams, a, b, tag);
      return 2;
    }
  }
  return 0;  // e.g. a split backward's input gradient: its weight gradient comes later
}

OpId RankStep::write_ring_exchange(ComputeChain& chain, const PassStreams& streams,
                                   const LayerStep& gather, const LayerStep& gemm,
                                   const OpTag& tag) {
  const int tp = s_.plan.layout.tp();
  const bool fused = gemm.shape.pass == GemmPass::kBackward;
  const LayerStep loaded = scaled_by_load(gemm, tag);
  const auto [input, weight] = fused ? split_backward(loaded) : std::pair{loaded, loaded};
  LayerStep ring = input;
  ring.kind = LayerStep::Kind::kRing;
  ring.ring_hops = tp - 1;
  ring.bytes = gather.bytes / tp;  // each hop carries one rank's shard of the gathered tensor
  const OpId first = write_ring(chain, streams, ring, tag, tp_ring_);
  // The weight gradient needs the whole gathered tensor: it follows the last shard's slice.
  if (fused) writer_.kernel(chain, streams.compute, weight, tag);
  return first;
}

OpId RankStep::write_pipelined_scatter(ComputeChain& chain, const PassStreams& streams,
                                       const LayerStep& gemm, const LayerStep& scatter,
                                       const OpTag& tag) {
  // Each chunk takes its share of the whole GEMM's time (the chunks run on several streams, as
  // the ring's slices do: rank_step_ring.cpp).
  LayerStep chunk = share_of(scaled_by_load(gemm, tag), 1.0 / kPipelineChunks);
  chunk.shape.reserved_sms = static_cast<float>(s_.plan.training.tp_comm_overlap_sms);
  OpId first = kNoOp;
  std::vector<OpId> scatters;
  for (int c = 0; c < kPipelineChunks; ++c) {
    const OpId id = writer_.kernel(chain, streams.compute, chunk, tag);
    if (first == kNoOp) first = id;
    scatters.push_back(writer_.detached_collective(
        streams.tp, scatter.name, CollectiveKind::kReduceScatter, tp_comm_,
        scatter.bytes / kPipelineChunks, CommDim::kTp, tag, {id}));
  }
  // What follows needs the whole scattered output.
  chain.pending.insert(chain.pending.end(), scatters.begin(), scatters.end());
  return first;
}

OpId RankStep::write_bulk_scatter(ComputeChain& chain, const PassStreams& streams,
                                  const LayerStep& gemm, const LayerStep& scatter,
                                  const OpTag& tag) {
  auto [input, weight] = split_backward(scaled_by_load(gemm, tag));
  const OpId first = writer_.kernel(chain, streams.compute, input, tag);
  const OpId scattered =
      writer_.detached_collective(streams.tp, scatter.name, CollectiveKind::kReduceScatter,
                                  tp_comm_, scatter.bytes, CommDim::kTp, tag, {first});
  weight.shape.reserved_sms = static_cast<float>(s_.plan.training.tp_comm_overlap_sms);
  writer_.kernel(chain, streams.compute, weight, tag);
  chain.pending.push_back(scattered);
  return first;
}

}  // namespace racksim
