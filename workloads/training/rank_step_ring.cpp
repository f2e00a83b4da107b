#include "workloads/training/rank_step.h"

namespace racksim {

namespace {

// Ring-attention blocks between context-parallel neighbours: matched in order, so the hop is
// enough to tell them apart.
uint32_t ring_tag(int hop) {
  return 0x40000000u | static_cast<uint32_t>(hop);
}

}  // namespace

OpId RankStep::write_ring(ComputeChain& chain, const PassStreams& streams, const LayerStep& step,
                          const OpTag& tag) {
  if (s_.merge_ring_hops && step.ring_hops > 1) {
    // AGGREGATED fidelity: the h remote blocks travel as one transfer while the kernel does
    // the work of the local block and h - 1 remote ones; the last block's slice follows its
    // arrival. A ring of h equal hops takes t_slice + h * max(t_slice, t_hop); this takes
    // max(h * t_slice, h * t_hop) + t_slice, the same, with 2 transfers instead of 2h.
    const double hops = step.ring_hops;
    LayerStep merged = step;
    merged.bytes = step.bytes * hops;
    merged.ring_hops = 1;
    LayerStep head = step;
    head.kind = LayerStep::Kind::kCompute;
    head.flops = step.flops * hops / (hops + 1);
    head.hbm_bytes = step.hbm_bytes * hops / (hops + 1);
    merged.flops = 2 * (step.flops - head.flops);  // the ring halves it: the last slice
    merged.hbm_bytes = 2 * (step.hbm_bytes - head.hbm_bytes);
    return write_ring_hops(chain, streams, merged, tag, &head);
  }
  return write_ring_hops(chain, streams, step, tag, nullptr);
}

OpId RankStep::write_ring_hops(ComputeChain& chain, const PassStreams& streams,
                               const LayerStep& step, const OpTag& tag,
                               const LayerStep* first_slice) {
  LayerStep slice = step;
  const double slices = step.ring_hops + 1;
  slice.flops /= slices;
  slice.hbm_bytes /= slices;
  OpId first = kNoOp;
  std::vector<OpId> block = chain.inputs();  // the local block: whatever produced it
  for (int hop = 0; hop <= step.ring_hops; ++hop) {
    if (hop < step.ring_hops) {
      writer_.graph().add_send(
          {rank_, streams.cp, tag.phase, tag.micro_batch, static_cast<int16_t>(tag.layer)},
          step.name + ".kv_send", cp_next_, ring_tag(hop), step.bytes, CommDim::kCp, block);
    }
    if (hop > 0) {
      const OpId recv = writer_.recv(chain, streams.cp, step.name + ".kv_recv", cp_prev_,
                                     ring_tag(hop - 1), step.bytes, CommDim::kCp, tag);
      block.assign(1, recv);
    }
    const bool replaced = first_slice != nullptr && hop == 0;
    const OpId id = writer_.kernel(chain, streams.compute, replaced ? *first_slice : slice, tag);
    if (first == kNoOp) first = id;
  }
  return first;
}

}  // namespace racksim
