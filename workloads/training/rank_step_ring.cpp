#include "workloads/training/rank_step.h"

namespace racksim {

OpId RankStep::write_ring(ComputeChain& chain, const PassStreams& streams, const LayerStep& step,
                          const OpTag& tag, const RingLink& link) {
  if (s_.merge_ring_hops && step.ring_hops > 1) {
    // AGGREGATED fidelity: the h remote blocks travel as one transfer while the kernel does
    // the work of the local block and h - 1 remote ones; the last block's slice follows its
    // arrival. A ring of h equal hops takes t_slice + h * max(t_slice, t_hop); this takes
    // max(h * t_slice, h * t_hop) + t_slice, the same, with 2 transfers instead of 2h.
    // Slices keep the kernel's whole shape (share_of): Transformer Engine issues a ring
    // exchange's GEMM slices on several streams, one slice's last partial wave of tiles beside
    // the next one's first.
    const double hops = step.ring_hops;
    LayerStep head = share_of(step, hops / (hops + 1));
    head.kind = LayerStep::Kind::kCompute;
    LayerStep merged = share_of(step, 2 / (hops + 1));  // the ring halves it: the last slice
    merged.bytes = step.bytes * hops;
    merged.ring_hops = 1;
    return write_ring_hops(chain, streams, merged, tag, link, &head);
  }
  return write_ring_hops(chain, streams, step, tag, link, nullptr);
}

OpId RankStep::write_ring_hops(ComputeChain& chain, const PassStreams& streams,
                               const LayerStep& step, const OpTag& tag, const RingLink& link,
                               const LayerStep* first_slice) {
  const LayerStep slice = share_of(step, 1.0 / (step.ring_hops + 1));
  const StreamId stream = comm_stream(streams, link.dim);
  OpId first = kNoOp;
  std::vector<OpId> block = chain.inputs();  // the local block: whatever produced it
  for (int hop = 0; hop <= step.ring_hops; ++hop) {
    if (hop < step.ring_hops) {
      writer_.graph().add_send(
          {rank_, stream, tag.phase, tag.micro_batch, static_cast<int16_t>(tag.layer)},
          step.name + link.send_suffix, link.next, link.tag_base | static_cast<uint32_t>(hop),
          step.bytes, link.dim, block);
    }
    if (hop > 0) {
      const OpId recv =
          writer_.recv(chain, stream, step.name + link.recv_suffix, link.prev,
                       link.tag_base | static_cast<uint32_t>(hop - 1), step.bytes, link.dim, tag);
      block.assign(1, recv);
    }
    const bool replaced = first_slice != nullptr && hop == 0;
    const OpId id = writer_.kernel(chain, streams.compute, replaced ? *first_slice : slice, tag);
    if (first == kNoOp) first = id;
  }
  return first;
}

}  // namespace racksim
