#include "workloads/training/rank_step.h"

#include <algorithm>
#include <numeric>

#include <stdexcept>

namespace racksim {

namespace {

// Send/recv tags between two stages: the activation entering route position `pos`, or the
// gradient leaving it, of one micro-batch.
uint32_t activation_tag(int micro_batch, int pos) {
  return static_cast<uint32_t>((micro_batch * 1024 + pos) * 2);
}

uint32_t gradient_tag(int micro_batch, int pos) {
  return activation_tag(micro_batch, pos) + 1;
}

constexpr double kDefaultBucketElements = 40e6;

RingLink ring_link(const std::vector<RankId>& group, int index, CommDim dim, uint32_t tag_base,
                   const char* send_suffix, const char* recv_suffix) {
  const int n = static_cast<int>(group.size());
  return {.dim = dim,
          .next = group[(index + 1) % n],
          .prev = group[(index + n - 1) % n],
          .tag_base = tag_base,
          .send_suffix = send_suffix,
          .recv_suffix = recv_suffix};
}

}  // namespace

StreamId comm_stream(const PassStreams& streams, CommDim dim) {
  switch (dim) {
    case CommDim::kEp:
      return streams.ep;
    case CommDim::kCp:
      return streams.cp;
    default:
      return streams.tp;
  }
}

RankStep::RankStep(const Shared& shared, EventGraph* graph, RankId rank)
    : s_(shared),
      rank_(rank),
      coords_(shared.plan.layout.coords(rank)),
      writer_(graph, rank, shared.plan.training.dtype, activation_dtype(shared.plan.training.dtype),
              {shared.plan.training.grad_accumulation, shared.plan.training.grad_reduce_dtype},
              Fp8Recipe{shared.plan.training.fp8_current_scaling ? Fp8Scaling::kCurrent
                                                                 : Fp8Scaling::kDelayed,
                        shared.plan.training.fp8_param_gather}),
      tp_comm_(graph->add_communicator(shared.plan.layout.tp_group(rank))),
      cp_comm_(graph->add_communicator(shared.plan.layout.cp_group(rank))),
      ep_comm_(graph->add_communicator(shared.plan.layout.ep_group(rank))),
      sync_(&writer_, sync_config(graph)) {
  // Ring-attention blocks and ring-exchange shards, matched in order between a pair of ranks:
  // the hop is enough to tell them apart within a ring.
  cp_ring_ = ring_link(shared.plan.layout.cp_group(rank), coords_.cp, CommDim::kCp, 0x40000000u,
                       ".kv_send", ".kv_recv");
  tp_ring_ = ring_link(shared.plan.layout.tp_group(rank), coords_.tp, CommDim::kTp, 0x50000000u,
                       ".ag_send", ".ag_recv");
  tp_overlap_ = shared.plan.training.tp_comm_overlap && shared.plan.layout.tp() > 1;
  fp8_amax_over_tp_ = shared.plan.training.fp8_current_scaling &&
                      shared.plan.training.dtype == DataType::kFp8 && shared.plan.layout.tp() > 1 &&
                      shared.plan.shape.sequence_parallel;
}

void RankStep::write_passes(const PassOrder& order) {
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i].overlaps_next && i + 1 < order.size()) {
      write_overlapped_pair(order[i], order[i + 1], static_cast<int>(i));
      ++i;
    } else {
      write_pass(main_, s_.main, order[i], static_cast<int>(i));
    }
  }
}

void RankStep::write(const PassOrder& order) {
  final_pass_ = last_backward_of_each_chunk(order);
  plan_chunk_gathers(order);
  plan_aligned_reductions(order);
  if (s_.plan.training.deepspeed_exchange) {
    write_deepspeed_passes(order);
  } else {
    write_passes(order);
  }
  main_.pending.insert(main_.pending.end(), overlap_.pending.begin(), overlap_.pending.end());
  if (overlap_.last_compute != kNoOp) main_.pending.push_back(overlap_.last_compute);
  drain_deferred_head_wgrad();
  write_tied_embedding_sync();
  sync_.finish(main_, s_.main.compute,
               rank_params(s_.plan.model, s_.plan.layout, s_.plan.map, rank_));
  // The fixed cost of a step across nodes (hardware.scale_out.step_overhead_s), after the rest.
  if (s_.plan.host.multi_node_step_overhead_s > 0) {
    writer_.graph().add_recorded_compute(
        writer_.context(s_.main.compute, {}), "step.multi_node_overhead",
        s_.plan.host.multi_node_step_overhead_s, 0, 0, main_.inputs());
  }
}

GradientSyncConfig RankStep::sync_config(EventGraph* graph) const {
  const TrainingSettings& t = s_.plan.training;
  GradientSyncConfig c;
  c.zero_stage = t.zero_stage;
  c.overlap = t.overlap_grad_reduce;
  c.overlap_param_gather = t.overlap_param_gather;
  c.bucket_first_chunk_only = t.bucket_first_chunk_only;
  c.align_grad_reduce = t.align_grad_reduce;
  c.chunks = s_.plan.map.chunks_per_stage();
  c.grad_bytes = bytes_per_element(t.grad_reduce_dtype);
  // Parameters travel in the dtype they live in: BF16 under FP8 training, unless the GEMMs' weights
  // are FP8 themselves (training.fp8_param_gather; the vocabulary tables stay BF16).
  c.table_param_bytes = bytes_per_element(activation_dtype(t.dtype));
  c.param_bytes = t.fp8_param_gather ? 1 : c.table_param_bytes;
  c.fp8_params = t.fp8_param_gather;
  c.fp8_current_scaling = t.fp8_current_scaling;
  c.moment_bytes = t.moment_bytes;
  const auto group = s_.plan.layout.dp_cp_group(rank_);
  c.dp = static_cast<int>(group.size());
  c.dp_comm = graph->add_communicator(group);
  // Megatron-Core's default bucket grows with the data-parallel group, so that each rank's share
  // of a bucket stays large enough for NCCL's rings to run at bandwidth.
  const double default_bucket = t.bucket_first_chunk_only
                                    ? std::max(kDefaultBucketElements, 1e6 * c.dp)
                                    : kDefaultBucketElements;
  c.bucket_elements = t.grad_bucket_elements > 0 ? t.grad_bucket_elements : default_bucket;
  const auto experts = s_.plan.layout.expert_dp_group(rank_);
  c.expert_dp = static_cast<int>(experts.size());
  c.expert_comm = graph->add_communicator(experts);
  c.unscale_fp16 = t.dtype == DataType::kFp16;
  c.clip_grad_norm = t.clip_grad_norm;
  // The checks' scalars are reduced over the model-parallel group; with a sharded optimizer
  // (Megatron's distributed optimizer) each data-parallel rank holds a shard of the gradients,
  // so over every rank (get_grad_stats_parallel_group).
  const bool sharded = t.zero_stage >= 1 && c.dp > 1;
  std::vector<RankId> check_group = s_.plan.layout.model_parallel_group(rank_);
  if (sharded) {
    check_group.resize(s_.plan.layout.num_ranks());
    std::iota(check_group.begin(), check_group.end(), RankId{0});
  }
  c.check_ranks = static_cast<int>(check_group.size());
  c.check_comm = graph->add_communicator(check_group);
  c.check_dim = sharded ? CommDim::kDp : s_.plan.layout.pp() > 1 ? CommDim::kPp : CommDim::kTp;
  c.stream = s_.dp_stream;
  c.offload = t.offload_optimizer;
  c.cpu_params_per_s = s_.plan.host.cpu_optimizer_params_per_s;
  c.numa_node = numa_node_of(rank_);
  c.to_host = s_.offload_streams.to_host;
  c.to_device = s_.offload_streams.to_device;
  c.host = s_.offload_streams.host;
  return c;
}

std::vector<int> RankStep::last_backward_of_each_chunk(const PassOrder& order) const {
  std::vector<int> last(s_.plan.map.chunks_per_stage(), -1);
  for (size_t i = 0; i < order.size(); ++i) {
    const PassKind k = order[i].kind;
    if (k == PassKind::kBackward || k == PassKind::kBackwardWeight) {
      last[order[i].local_chunk] = static_cast<int>(i);
    }
  }
  return last;
}

void RankStep::write_overlapped_pair(const PipelinePass& a, const PipelinePass& b, int index) {
  // The pair is launched together once both passes' inputs have arrived, as DualPipe's
  // overlapped forward-backward kernel is.
  ComputeChain inputs;
  write_pass_input(inputs, s_.main, a);
  write_pass_input(inputs, s_.overlap, b);
  const OpId main_before = main_.last_compute;
  if (overlap_.last_compute != kNoOp) main_.pending.push_back(overlap_.last_compute);
  main_.pending.insert(main_.pending.end(), inputs.pending.begin(), inputs.pending.end());
  write_pass(main_, s_.main, a, index, /*inputs_written=*/true);
  if (main_before != kNoOp) overlap_.pending.push_back(main_before);
  overlap_.pending.insert(overlap_.pending.end(), inputs.pending.begin(), inputs.pending.end());
  write_pass(overlap_, s_.overlap, b, index + 1, /*inputs_written=*/true);
  main_.pending.push_back(overlap_.last_compute);
}

void RankStep::write_pass_input(ComputeChain& chain, const PassStreams& streams,
                                const PipelinePass& pass) {
  const auto& route = s_.plan.map.route(pass.micro_batch, s_.plan.micro_batches);
  const int pos =
      s_.plan.map.position(pass.micro_batch, s_.plan.micro_batches, {coords_.pp, pass.local_chunk});
  const int mb = pass.micro_batch;
  if (pass.kind == PassKind::kForward && pos > 0) {
    const OpTag tag{Phase::kForward, mb, -1};
    const PipelineHop hop = pipeline_hop(PipelineTransfer::kRecvActivation, route, pos, mb);
    writer_.recv(chain, streams.pp, "recv.activation", hop.peer, hop.tag, hop.bytes, CommDim::kPp,
                 tag);
    write_handoff(chain, streams.compute, hop.bytes, tag);
  }
  const bool backward = pass.kind == PassKind::kBackward || pass.kind == PassKind::kBackwardInput;
  if (backward && pos + 1 < static_cast<int>(route.size())) {
    const OpTag tag{Phase::kBackward, mb, -1};
    const PipelineHop hop = pipeline_hop(PipelineTransfer::kRecvGradient, route, pos, mb);
    writer_.recv(chain, streams.pp, "recv.gradient", hop.peer, hop.tag, hop.bytes, CommDim::kPp,
                 tag);
    write_handoff(chain, streams.compute, hop.bytes, tag);
  }
}

void RankStep::write_pass(ComputeChain& chain, const PassStreams& streams, const PipelinePass& pass,
                          int index, bool inputs_written) {
  if (!inputs_written) write_pass_input(chain, streams, pass);
  const ChunkRef chunk{coords_.pp, pass.local_chunk};
  const auto& route = s_.plan.map.route(pass.micro_batch, s_.plan.micro_batches);
  const int pos = s_.plan.map.position(pass.micro_batch, s_.plan.micro_batches, chunk);
  if (pos < 0)
    throw std::logic_error("training step: a pass on a chunk its micro-batch never visits");
  const Visit visit{chain, streams, pass, route, pos, index == final_pass_[pass.local_chunk]};
  sync_.begin_chunk(pass.local_chunk, first_of_model(pass.local_chunk));
  switch (pass.kind) {
    case PassKind::kForward:
      write_forward(visit);
      break;
    case PassKind::kBackward:
    case PassKind::kBackwardInput:
      write_backward(visit);
      break;
    case PassKind::kBackwardWeight:
      write_weight(visit);
      break;
  }
}

RankId RankStep::rank_of_stage(int stage) const {
  RankCoords c = coords_;
  c.pp = stage;
  return s_.plan.layout.rank(c);
}

RankStep::PipelineHop RankStep::pipeline_hop(PipelineTransfer transfer,
                                             const std::vector<ChunkRef>& route, int pos,
                                             int mb) const {
  switch (transfer) {
    case PipelineTransfer::kRecvActivation:
      return {rank_of_stage(route[pos - 1].stage), activation_tag(mb, pos), p2p_bytes(pos - 1)};
    case PipelineTransfer::kSendActivation:
      return {rank_of_stage(route[pos + 1].stage), activation_tag(mb, pos + 1), p2p_bytes(pos)};
    case PipelineTransfer::kRecvGradient:
      return {rank_of_stage(route[pos + 1].stage), gradient_tag(mb, pos + 1), p2p_bytes(pos)};
    case PipelineTransfer::kSendGradient:
      return {rank_of_stage(route[pos - 1].stage), gradient_tag(mb, pos), p2p_bytes(pos - 1)};
  }
  throw std::logic_error("training step: an unknown pipeline transfer");
}

double RankStep::p2p_bytes(int hop) const {
  const TrainingSettings& t = s_.plan.training;
  const double one =
      static_cast<double>(t.micro_batch_size * t.seq_length * s_.plan.model.hidden()) *
      bytes_per_element(activation_dtype(t.dtype)) / (s_.plan.layout.tp() * s_.plan.layout.cp());
  // After MTP modules of their own, the main hidden state travels with one per module
  // (Megatron-Core concatenates them along the sequence for the output layer's chunk).
  const int mtp = s_.plan.map.standalone_mtp_position();
  return mtp >= 0 && hop >= mtp ? one * (1 + s_.plan.model.mtp_depth()) : one;
}

bool RankStep::runs_standalone_mtp(const Visit& v) const {
  return v.pos == s_.plan.map.standalone_mtp_position();
}

bool RankStep::blocking_sends() const {
  return !s_.plan.training.pp_comm_overlap;
}

void RankStep::write_handoff(ComputeChain& chain, StreamId compute, double bytes,
                             const OpTag& tag) {
  const double rate = s_.plan.host.pipeline_handoff_bytes_per_s;
  if (!(rate > 0)) return;
  // Pending, not the chain's last kernel: an overlapped pair hands its inputs' pending list on.
  chain.pending.assign(
      1, writer_.graph().add_recorded_compute(writer_.context(compute, tag), "pp.handoff",
                                              bytes / rate, 0, 0, chain.inputs()));
}

void RankStep::write_forward(const Visit& v) {
  const int mb = v.pass.micro_batch;
  const OpTag tag{Phase::kForward, mb, -1};
  const OpId before = v.chain.last_compute;
  wait_for_chunk_gather(v, before);
  // Layer-by-layer gathers follow the forward, one layer ahead, except the first chunk's under
  // the interleaved schedule, which issues them all before its first pass.
  const bool gathers_at_start = !chunk_gather_.empty() && s_.plan.map.chunks_per_stage() > 1;
  OpId previous_start = kNoOp;
  if (v.first()) {
    sync_.gather_parameters(v.chain, block_params(s_.embedding), kNoOp, tag);
    previous_start = write_steps(v.chain, v.streams, s_.embedding.forward, tag);
  }
  const LayerRange layers = s_.plan.map.layers({coords_.pp, v.pass.local_chunk});
  for (int l = layers.first; l < layers.first + layers.count; ++l) {
    sync_.gather_parameters(v.chain, layer_params(l), gathers_at_start ? kNoOp : previous_start,
                            {Phase::kForward, mb, l});
    previous_start =
        write_steps(v.chain, v.streams, s_.layers[l].forward, {Phase::kForward, mb, l});
    stash_activations(v.chain, mb, l);
  }
  if (runs_standalone_mtp(v)) {
    sync_.gather_parameters(v.chain, block_params(s_.mtp), previous_start, tag);
    write_steps(v.chain, v.streams, s_.mtp.forward, tag);
  }
  if (v.last()) {
    sync_.gather_parameters(v.chain, block_params(s_.head), previous_start, tag);
    write_steps(v.chain, v.streams, s_.head.forward, tag);
  }
  issue_due_chunk_gathers(before);
  if (!v.last() && !s_.plan.training.deepspeed_exchange) {
    const PipelineHop hop = pipeline_hop(PipelineTransfer::kSendActivation, v.route, v.pos, mb);
    writer_.send(v.chain, v.streams.pp, "send.activation", hop.peer, hop.tag, hop.bytes,
                 CommDim::kPp, blocking_sends(), tag);
    write_handoff(v.chain, v.streams.compute, hop.bytes, tag);
  }
}

void RankStep::write_backward(const Visit& v) {
  const int mb = v.pass.micro_batch;
  const bool split = v.pass.kind == PassKind::kBackwardInput;
  const OpTag tag{Phase::kBackward, mb, -1};
  auto steps_of = [&](const BlockSteps& b) -> const std::vector<LayerStep>& {
    return split ? b.backward_input : b.backward;
  };
  OpId previous_layer_start = kNoOp;
  if (v.last()) {
    // With deferral the head's gradients become ready in the drain (the `split` argument below
    // keeps them from being declared ready here); a deferred pass writes only its input
    // gradient now. The first whole backward always defers, so the drain knows it has work.
    const bool deferral = s_.plan.training.defer_embedding_wgrad && !split;
    const bool defer = defers_head_wgrad(split);
    if (defer) deferred_head_wgrad_.push_back(mb);
    previous_layer_start = head_or_embedding_backward(
        v, s_.head, defer ? s_.head_deferral.backward : steps_of(s_.head), split || deferral,
        kNoOp);
  }
  if (runs_standalone_mtp(v)) {
    previous_layer_start =
        head_or_embedding_backward(v, s_.mtp, steps_of(s_.mtp), split, previous_layer_start);
  }
  const LayerRange layers = s_.plan.map.layers({coords_.pp, v.pass.local_chunk});
  const TrainingSettings& training = s_.plan.training;
  for (int l = layers.first + layers.count; l-- > layers.first;) {
    const OpTag layer_tag{Phase::kBackward, mb, l};
    sync_.gather_parameters(v.chain, layer_params(l), previous_layer_start, layer_tag);
    fetch_activations(v.chain, mb, l, previous_layer_start);
    OpId start = kNoOp;
    if (training.recomputes_layer(l)) {
      start = write_steps(v.chain, v.streams, s_.layers[l].forward, {Phase::kRecompute, mb, l});
    } else if (training.recompute == config::Training::SELECTIVE) {
      start = write_steps(v.chain, v.streams, s_.layers[l].selective_recompute,
                          {Phase::kRecompute, mb, l});
    }
    const OpId first_backward = write_steps(v.chain, v.streams, steps_of(s_.layers[l]), layer_tag);
    previous_layer_start = start != kNoOp ? start : first_backward;
    if (!split) sync_.gradients_ready(layer_params(l), v.chain.last_compute, v.final, layer_tag);
  }
  if (v.first())
    head_or_embedding_backward(v, s_.embedding, steps_of(s_.embedding), split,
                               previous_layer_start);
  if (!v.first() && !s_.plan.training.deepspeed_exchange) {
    const PipelineHop hop = pipeline_hop(PipelineTransfer::kSendGradient, v.route, v.pos, mb);
    writer_.send(v.chain, v.streams.pp, "send.gradient", hop.peer, hop.tag, hop.bytes, CommDim::kPp,
                 blocking_sends(), tag);
    write_handoff(v.chain, v.streams.compute, hop.bytes, tag);
  }
  if (!split) sync_.backward_done(v.chain, tag, v.final);
  release_due_reductions(v);
}

OpId RankStep::head_or_embedding_backward(const Visit& v, const BlockSteps& block,
                                          const std::vector<LayerStep>& steps, bool split,
                                          OpId prefetch_after) {
  const OpTag tag{Phase::kBackward, v.pass.micro_batch, -1};
  sync_.gather_parameters(v.chain, block_params(block), prefetch_after, tag);
  const OpId first = write_steps(v.chain, v.streams, steps, tag);
  if (!split) sync_.gradients_ready(block_params(block), v.chain.last_compute, v.final, tag);
  return first;
}

bool RankStep::defers_head_wgrad(bool split) const {
  return !split &&
         static_cast<int>(deferred_head_wgrad_.size()) < deferred_head_micro_batches(s_.plan);
}

void RankStep::drain_deferred_head_wgrad() {
  if (deferred_head_wgrad_.empty()) return;
  OpTag tag{Phase::kBackwardWeight, deferred_head_wgrad_.front(), -1};
  // Megatron-Core's drain (drain_embedding_wgrad_compute) keeps each micro-batch's input as its
  // sequence-parallel shard and all-gathers it over TP before the GEMM, the next micro-batch's
  // gather running under the current GEMM.
  const double gather_bytes = s_.head_deferral.input_gather_bytes;
  auto gather = [&](const std::vector<OpId>& after) {
    return writer_.detached_collective(s_.main.tp, "lm_head.wgrad_input.allgather",
                                       CollectiveKind::kAllGather, tp_comm_, gather_bytes,
                                       CommDim::kTp, tag, after);
  };
  OpId gathered = gather_bytes > 0 ? gather(main_.inputs()) : kNoOp;
  for (size_t i = 0; i < deferred_head_wgrad_.size(); ++i) {
    tag.micro_batch = deferred_head_wgrad_[i];
    if (gathered != kNoOp) {
      main_.pending.push_back(gathered);
      if (i + 1 < deferred_head_wgrad_.size()) gathered = gather({gathered});
    }
    write_steps(main_, s_.main, s_.head_deferral.output_wgrad, tag);
  }
  // Every micro-batch's share of the head's gradient is in now (the later ones ran theirs in
  // their backward passes, which the chain has passed).
  sync_.gradients_ready(block_params(s_.head), main_.last_compute, /*final=*/true, tag);
}

void RankStep::write_weight(const Visit& v) {
  const int mb = v.pass.micro_batch;
  const OpTag tag{Phase::kBackwardWeight, mb, -1};
  if (v.last()) {
    write_steps(v.chain, v.streams, s_.head.backward_weight, tag);
    sync_.gradients_ready(block_params(s_.head), v.chain.last_compute, v.final, tag);
  }
  if (runs_standalone_mtp(v)) {
    write_steps(v.chain, v.streams, s_.mtp.backward_weight, tag);
    sync_.gradients_ready(block_params(s_.mtp), v.chain.last_compute, v.final, tag);
  }
  const LayerRange layers = s_.plan.map.layers({coords_.pp, v.pass.local_chunk});
  for (int l = layers.first + layers.count; l-- > layers.first;) {
    const OpTag layer_tag{Phase::kBackwardWeight, mb, l};
    write_steps(v.chain, v.streams, s_.layers[l].backward_weight, layer_tag);
    sync_.gradients_ready(layer_params(l), v.chain.last_compute, v.final, layer_tag);
  }
  if (v.first()) {
    write_steps(v.chain, v.streams, s_.embedding.backward_weight, tag);
    sync_.gradients_ready(block_params(s_.embedding), v.chain.last_compute, v.final, tag);
  }
  sync_.backward_done(v.chain, tag, v.final);
  release_due_reductions(v);
}

OpId RankStep::write_steps(ComputeChain& chain, const PassStreams& streams,
                           const std::vector<LayerStep>& steps, const OpTag& tag) {
  OpId first = kNoOp;
  for (size_t i = 0; i < steps.size();) {
    OpId id = kNoOp;
    if (fp8_amax_over_tp_) write_fp8_amax_reduction(chain, streams, steps, i, tag);
    if (const size_t written = write_tp_overlap(chain, streams, steps, i, tag, &id)) {
      i += written;
    } else {
      const LayerStep& step = steps[i++];
      switch (step.kind) {
        case LayerStep::Kind::kCompute:
          id = writer_.kernel(chain, streams.compute, scaled_by_load(step, tag), tag);
          break;
        case LayerStep::Kind::kRing:
          id = write_ring(chain, streams, step, tag, cp_ring_);
          break;
        case LayerStep::Kind::kCollective:
          if (step.forward) write_collective(chain, streams, step, tag);
          break;
      }
    }
    if (first == kNoOp) first = id;
  }
  return first;
}

void RankStep::write_collective(ComputeChain& chain, const PassStreams& streams,
                                const LayerStep& step, const OpTag& tag) {
  const StreamId stream = comm_stream(streams, step.dim);
  const CommId comm =
      step.dim == CommDim::kEp ? ep_comm_ : (step.dim == CommDim::kCp ? cp_comm_ : tp_comm_);
  const uint32_t weights = step.expert_weighted ? routing_weights(step.weighting, tag) : 0;
  writer_.collective(chain, stream, step.name, *step.forward, comm, step.bytes, step.dim, tag,
                     weights);
}

}  // namespace racksim
