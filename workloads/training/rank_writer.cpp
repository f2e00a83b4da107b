#include "workloads/training/rank_writer.h"

namespace racksim {

std::vector<OpId> ComputeChain::inputs() const {
  std::vector<OpId> deps = pending;
  if (last_compute != kNoOp) deps.push_back(last_compute);
  return deps;
}

OpContext RankWriter::context(StreamId stream, const OpTag& tag) const {
  return OpContext{rank_, stream, tag.phase, tag.micro_batch, static_cast<int16_t>(tag.layer)};
}

OpId RankWriter::kernel(ComputeChain& chain, StreamId stream, const LayerStep& step,
                        const OpTag& tag) {
  const DataType dtype = step.op_class == OpClass::kGemm ? gemm_dtype_ : dtype_;
  const OpId id = graph_->add_compute(context(stream, tag), step.name, step.op_class, step.flops,
                                      step.hbm_bytes, dtype, chain.pending, step.shape);
  chain.pending.clear();
  chain.last_compute = id;
  return id;
}

OpId RankWriter::collective(ComputeChain& chain, StreamId stream, const std::string& name,
                            CollectiveKind kind, CommId comm, double bytes, CommDim dim,
                            const OpTag& tag, uint32_t weights) {
  // The collective reduces what the compute stream produced, or gathers what it was about to
  // consume (e.g. a received gradient), so it waits for both.
  const OpId id = graph_->add_collective(context(stream, tag), name, kind, comm, bytes, dim,
                                         chain.inputs(), weights);
  chain.pending.assign(1, id);
  return id;
}

OpId RankWriter::detached_collective(StreamId stream, const std::string& name, CollectiveKind kind,
                                     CommId comm, double bytes, CommDim dim, const OpTag& tag,
                                     const std::vector<OpId>& deps) {
  return graph_->add_collective(context(stream, tag), name, kind, comm, bytes, dim, deps);
}

OpId RankWriter::send(ComputeChain& chain, StreamId stream, const std::string& name, RankId peer,
                      uint32_t tag, double bytes, CommDim dim, bool blocking, const OpTag& op_tag) {
  const OpId id =
      graph_->add_send(context(stream, op_tag), name, peer, tag, bytes, dim, chain.inputs());
  chain.pending.clear();
  if (blocking) chain.pending.push_back(id);
  return id;
}

OpId RankWriter::recv(ComputeChain& chain, StreamId stream, const std::string& name, RankId peer,
                      uint32_t tag, double bytes, CommDim dim, const OpTag& op_tag) {
  const OpId id = graph_->add_recv(context(stream, op_tag), name, peer, tag, bytes, dim);
  chain.pending.push_back(id);
  return id;
}

}  // namespace racksim
