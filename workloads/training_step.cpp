#include "workloads/training_step.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "workloads/expert_routing.h"
#include "workloads/gradient_sync.h"
#include "workloads/memory_ledger.h"
#include "workloads/rank_writer.h"

namespace racksim {

namespace {

constexpr double kDefaultBucketElements = 40e6;

// Send/recv tags between two stages: the activation entering route position `pos`, or the
// gradient leaving it, of one micro-batch.
uint32_t activation_tag(int micro_batch, int pos) {
  return static_cast<uint32_t>((micro_batch * 1024 + pos) * 2);
}
uint32_t gradient_tag(int micro_batch, int pos) {
  return activation_tag(micro_batch, pos) + 1;
}

// Ring-attention blocks between context-parallel neighbours: matched in order, so the hop is
// enough to tell them apart.
uint32_t ring_tag(int hop) {
  return 0x40000000u | static_cast<uint32_t>(hop);
}

// Writes one rank's step.
class RankStep {
 public:
  struct Shared {
    const config::Scenario& scenario;
    const TransformerModel& model;
    const ParallelLayout& layout;
    const PipelineMap& map;
    const std::vector<BlockSteps>& layers;
    const BlockSteps& embedding;
    const BlockSteps& head;
    int micro_batches;
    PassStreams main;
    PassStreams overlap;
    StreamId dp_stream;
    // Per layer, the expert-parallel ranks' shares of the routed tokens (empty for dense layers).
    const std::vector<std::vector<double>>& expert_rank_shares;
    OffloadStreams offload_streams;
    // Per layer, what it keeps for its backward (the bytes activation offload moves); empty
    // without activation offload.
    const std::vector<double>& offloaded_activation_bytes;
  };

  RankStep(const Shared& shared, EventGraph* graph, RankId rank)
      : s_(shared),
        rank_(rank),
        coords_(shared.layout.coords(rank)),
        writer_(graph, rank, to_data_type(shared.scenario.training().dtype())),
        tp_comm_(graph->add_communicator(shared.layout.tp_group(rank))),
        cp_comm_(graph->add_communicator(shared.layout.cp_group(rank))),
        ep_comm_(graph->add_communicator(shared.layout.ep_group(rank))),
        sync_(&writer_, sync_config(graph)) {
    const auto cp = shared.layout.cp_group(rank);
    const int c = coords_.cp;
    const int n = static_cast<int>(cp.size());
    cp_next_ = cp[(c + 1) % n];
    cp_prev_ = cp[(c + n - 1) % n];
  }

  void write(const PassOrder& order) {
    final_pass_ = last_backward_of_each_chunk(order);
    for (size_t i = 0; i < order.size(); ++i) {
      if (order[i].overlaps_next && i + 1 < order.size()) {
        write_overlapped_pair(order[i], order[i + 1], static_cast<int>(i));
        ++i;
      } else {
        write_pass(main_, s_.main, order[i], static_cast<int>(i));
      }
    }
    main_.pending.insert(main_.pending.end(), overlap_.pending.begin(), overlap_.pending.end());
    if (overlap_.last_compute != kNoOp) main_.pending.push_back(overlap_.last_compute);
    write_tied_embedding_sync();
    sync_.finish(main_, s_.main.compute, rank_params(s_.model, s_.layout, s_.map, rank_));
  }

 private:
  GradientSyncConfig sync_config(EventGraph* graph) const {
    const auto& t = s_.scenario.training();
    GradientSyncConfig c;
    c.zero_stage = t.zero_stage();
    c.overlap = t.overlap_grad_reduce();
    c.bucket_elements = t.grad_bucket_elements() > 0 ? static_cast<double>(t.grad_bucket_elements())
                                                     : kDefaultBucketElements;
    c.grad_bytes = bytes_per_element(to_data_type(t.grad_reduce_dtype()));
    c.param_bytes = bytes_per_element(to_data_type(t.dtype()));
    const auto group = s_.layout.dp_cp_group(rank_);
    c.dp = static_cast<int>(group.size());
    c.dp_comm = graph->add_communicator(group);
    const auto experts = s_.layout.expert_dp_group(rank_);
    c.expert_dp = static_cast<int>(experts.size());
    c.expert_comm = graph->add_communicator(experts);
    c.stream = s_.dp_stream;
    c.offload = t.offload_optimizer();
    c.cpu_params_per_s = s_.scenario.hardware().host().cpu_optimizer_params_per_s();
    c.numa_node = numa_node_of(rank_);
    c.to_host = s_.offload_streams.to_host;
    c.to_device = s_.offload_streams.to_device;
    c.host = s_.offload_streams.host;
    return c;
  }

  // For each local chunk, the index of the pass after which no later micro-batch adds to its
  // weight gradients.
  std::vector<int> last_backward_of_each_chunk(const PassOrder& order) const {
    std::vector<int> last(s_.map.chunks_per_stage(), -1);
    for (size_t i = 0; i < order.size(); ++i) {
      const PassKind k = order[i].kind;
      if (k == PassKind::kBackward || k == PassKind::kBackwardWeight) {
        last[order[i].local_chunk] = static_cast<int>(i);
      }
    }
    return last;
  }

  // DualPipe: two passes of different micro-batches run at once on two compute streams; both
  // start after the previous work of both streams and the next pass waits for both.
  void write_overlapped_pair(const PipelinePass& a, const PipelinePass& b, int index) {
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

  // The data a pass needs from a neighbouring stage: the activation entering a forward, the
  // gradient entering a backward.
  void write_pass_input(ComputeChain& chain, const PassStreams& streams, const PipelinePass& pass) {
    const auto& route = s_.map.route(pass.micro_batch, s_.micro_batches);
    const int pos =
        s_.map.position(pass.micro_batch, s_.micro_batches, {coords_.pp, pass.local_chunk});
    const int mb = pass.micro_batch;
    if (pass.kind == PassKind::kForward && pos > 0) {
      writer_.recv(chain, streams.pp, "recv.activation", rank_of_stage(route[pos - 1].stage),
                   activation_tag(mb, pos), p2p_bytes(), CommDim::kPp, {Phase::kForward, mb, -1});
    }
    const bool backward = pass.kind == PassKind::kBackward || pass.kind == PassKind::kBackwardInput;
    if (backward && pos + 1 < static_cast<int>(route.size())) {
      writer_.recv(chain, streams.pp, "recv.gradient", rank_of_stage(route[pos + 1].stage),
                   gradient_tag(mb, pos + 1), p2p_bytes(), CommDim::kPp,
                   {Phase::kBackward, mb, -1});
    }
  }

  void write_pass(ComputeChain& chain, const PassStreams& streams, const PipelinePass& pass,
                  int index, bool inputs_written = false) {
    if (!inputs_written) write_pass_input(chain, streams, pass);
    const ChunkRef chunk{coords_.pp, pass.local_chunk};
    const auto& route = s_.map.route(pass.micro_batch, s_.micro_batches);
    const int pos = s_.map.position(pass.micro_batch, s_.micro_batches, chunk);
    if (pos < 0)
      throw std::logic_error("training step: a pass on a chunk its micro-batch never visits");
    const Visit visit{chain, streams, pass, route, pos, index == final_pass_[pass.local_chunk]};
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

  struct Visit {
    ComputeChain& chain;
    const PassStreams& streams;
    const PipelinePass& pass;
    const std::vector<ChunkRef>& route;
    int pos;
    bool final;  // the chunk's last backward pass: its gradients are complete afterwards
    bool first() const { return pos == 0; }
    bool last() const { return pos + 1 == static_cast<int>(route.size()); }
  };

  // The CPU socket holding what the rank offloads: the one pinned by
  // hardware.host.offload_socket, else the one next to the rank's GPU (rank r runs on GPU r; a
  // server's GPUs are spread evenly over its sockets).
  uint32_t numa_node_of(RankId rank) const {
    const auto& hw = s_.scenario.hardware();
    if (hw.host().has_offload_socket()) return static_cast<uint32_t>(hw.host().offload_socket());
    const int per_node = std::max(1, hw.gpus_per_node());
    const int sockets = std::max(1, hw.host().sockets());
    return static_cast<uint32_t>((static_cast<int>(rank) % per_node) * sockets / per_node);
  }

  RankId rank_of_stage(int stage) const {
    RankCoords c = coords_;
    c.pp = stage;
    return s_.layout.rank(c);
  }

  // Each TP (and CP) rank sends its slice of the [micro-batch, sequence, hidden] activation.
  double p2p_bytes() const {
    const auto& t = s_.scenario.training();
    return static_cast<double>(t.micro_batch_size() * t.seq_length() * s_.model.hidden()) *
           bytes_per_element(to_data_type(t.dtype())) / (s_.layout.tp() * s_.layout.cp());
  }
  bool blocking_sends() const { return !s_.scenario.training().pp_comm_overlap(); }

  void write_forward(const Visit& v) {
    const int mb = v.pass.micro_batch;
    const OpTag tag{Phase::kForward, mb, -1};
    OpId previous_start = kNoOp;
    if (v.first()) {
      sync_.gather_parameters(v.chain, block_params(s_.embedding), kNoOp, tag);
      previous_start = write_steps(v.chain, v.streams, s_.embedding.forward, tag);
    }
    const LayerRange layers = s_.map.layers({coords_.pp, v.pass.local_chunk});
    for (int l = layers.first; l < layers.first + layers.count; ++l) {
      sync_.gather_parameters(v.chain, layer_params(l), previous_start, {Phase::kForward, mb, l});
      previous_start =
          write_steps(v.chain, v.streams, s_.layers[l].forward, {Phase::kForward, mb, l});
      stash_activations(v.chain, mb, l);
    }
    if (v.last()) {
      sync_.gather_parameters(v.chain, block_params(s_.head), previous_start, tag);
      write_steps(v.chain, v.streams, s_.head.forward, tag);
    }
    if (!v.last()) {
      writer_.send(v.chain, v.streams.pp, "send.activation",
                   rank_of_stage(v.route[v.pos + 1].stage), activation_tag(mb, v.pos + 1),
                   p2p_bytes(), CommDim::kPp, blocking_sends(), tag);
    }
  }

  void write_backward(const Visit& v) {
    const int mb = v.pass.micro_batch;
    const bool split = v.pass.kind == PassKind::kBackwardInput;
    const OpTag tag{Phase::kBackward, mb, -1};
    auto steps_of = [&](const BlockSteps& b) -> const std::vector<LayerStep>& {
      return split ? b.backward_input : b.backward;
    };
    OpId previous_layer_start = kNoOp;
    if (v.last())
      previous_layer_start =
          head_or_embedding_backward(v, s_.head, steps_of(s_.head), split, kNoOp);
    const LayerRange layers = s_.map.layers({coords_.pp, v.pass.local_chunk});
    const auto recompute = s_.scenario.training().recompute();
    for (int l = layers.first + layers.count; l-- > layers.first;) {
      const OpTag layer_tag{Phase::kBackward, mb, l};
      sync_.gather_parameters(v.chain, layer_params(l), previous_layer_start, layer_tag);
      fetch_activations(v.chain, mb, l, previous_layer_start);
      OpId start = kNoOp;
      if (recompute == config::Training::FULL) {
        start = write_steps(v.chain, v.streams, s_.layers[l].forward, {Phase::kRecompute, mb, l});
      } else if (recompute == config::Training::SELECTIVE) {
        start = write_steps(v.chain, v.streams, s_.layers[l].selective_recompute,
                            {Phase::kRecompute, mb, l});
      }
      const OpId first_backward =
          write_steps(v.chain, v.streams, steps_of(s_.layers[l]), layer_tag);
      previous_layer_start = start != kNoOp ? start : first_backward;
      if (!split) sync_.gradients_ready(layer_params(l), v.chain.last_compute, v.final, layer_tag);
    }
    if (v.first())
      head_or_embedding_backward(v, s_.embedding, steps_of(s_.embedding), split,
                                 previous_layer_start);
    if (!v.first()) {
      writer_.send(v.chain, v.streams.pp, "send.gradient", rank_of_stage(v.route[v.pos - 1].stage),
                   gradient_tag(mb, v.pos), p2p_bytes(), CommDim::kPp, blocking_sends(), tag);
    }
  }

  // Activation offload: what layer `l` keeps for its backward goes to pinned host memory once
  // its forward is done, on the device-to-host copy stream, while the next layer computes.
  void stash_activations(const ComputeChain& chain, int mb, int l) {
    if (!s_.scenario.training().offload_activations()) return;
    stashed_[{mb, l}] = writer_.graph().add_copy(
        copy_context(s_.offload_streams.to_host, {Phase::kForward, mb, l}), "activations.to_host",
        CopyDirection::kDeviceToHost, numa_node_of(rank_), s_.offloaded_activation_bytes[l],
        chain.inputs());
  }

  // ... and comes back before the layer's backward (or recompute). Double buffering: the copy
  // starts when the backward of the layer above starts (`prefetch_after`), so at most two
  // layers' activations are in HBM; the first layer of a pass waits for the previous kernel.
  void fetch_activations(ComputeChain& chain, int mb, int l, OpId prefetch_after) {
    if (!s_.scenario.training().offload_activations()) return;
    std::vector<OpId> deps{stashed_.at({mb, l})};
    const OpId trigger = prefetch_after != kNoOp ? prefetch_after : chain.last_compute;
    if (trigger != kNoOp) deps.push_back(trigger);
    chain.pending.push_back(writer_.graph().add_copy(
        copy_context(s_.offload_streams.to_device, {Phase::kBackward, mb, l}),
        "activations.to_device", CopyDirection::kHostToDevice, numa_node_of(rank_),
        s_.offloaded_activation_bytes[l], deps));
  }

  OpContext copy_context(StreamId stream, const OpTag& tag) const {
    return OpContext{rank_, stream, tag.phase, tag.micro_batch, static_cast<int16_t>(tag.layer)};
  }

  // Returns the first kernel written.
  OpId head_or_embedding_backward(const Visit& v, const BlockSteps& block,
                                  const std::vector<LayerStep>& steps, bool split,
                                  OpId prefetch_after) {
    const OpTag tag{Phase::kBackward, v.pass.micro_batch, -1};
    sync_.gather_parameters(v.chain, block_params(block), prefetch_after, tag);
    const OpId first = write_steps(v.chain, v.streams, steps, tag);
    if (!split) sync_.gradients_ready(block_params(block), v.chain.last_compute, v.final, tag);
    return first;
  }

  // W: the weight gradients deferred by a split backward.
  void write_weight(const Visit& v) {
    const int mb = v.pass.micro_batch;
    const OpTag tag{Phase::kBackwardWeight, mb, -1};
    if (v.last()) {
      write_steps(v.chain, v.streams, s_.head.backward_weight, tag);
      sync_.gradients_ready(block_params(s_.head), v.chain.last_compute, v.final, tag);
    }
    const LayerRange layers = s_.map.layers({coords_.pp, v.pass.local_chunk});
    for (int l = layers.first + layers.count; l-- > layers.first;) {
      const OpTag layer_tag{Phase::kBackwardWeight, mb, l};
      write_steps(v.chain, v.streams, s_.layers[l].backward_weight, layer_tag);
      sync_.gradients_ready(layer_params(l), v.chain.last_compute, v.final, layer_tag);
    }
    if (v.first()) {
      write_steps(v.chain, v.streams, s_.embedding.backward_weight, tag);
      sync_.gradients_ready(block_params(s_.embedding), v.chain.last_compute, v.final, tag);
    }
  }

  // Writes the steps; returns the first kernel written (kNoOp if none).
  OpId write_steps(ComputeChain& chain, const PassStreams& streams,
                   const std::vector<LayerStep>& steps, const OpTag& tag) {
    OpId first = kNoOp;
    for (const LayerStep& step : steps) {
      OpId id = kNoOp;
      switch (step.kind) {
        case LayerStep::Kind::kCompute:
          id = writer_.kernel(chain, streams.compute, scaled_by_load(step, tag), tag);
          break;
        case LayerStep::Kind::kRing:
          id = write_ring(chain, streams, step, tag);
          break;
        case LayerStep::Kind::kCollective:
          if (step.forward) write_collective(chain, streams, step, tag);
          break;
      }
      if (first == kNoOp) first = id;
    }
    return first;
  }

  void write_collective(ComputeChain& chain, const PassStreams& streams, const LayerStep& step,
                        const OpTag& tag) {
    StreamId stream = streams.tp;
    CommId comm = tp_comm_;
    if (step.dim == CommDim::kEp) {
      stream = streams.ep;
      comm = ep_comm_;
    } else if (step.dim == CommDim::kCp) {
      stream = streams.cp;
      comm = cp_comm_;
    }
    const uint32_t weights = step.expert_weighted ? routing_weights(step.weighting, tag) : 0;
    writer_.collective(chain, stream, step.name, *step.forward, comm, step.bytes, step.dim, tag,
                       weights);
  }

  // Ring attention: the kernel in hops + 1 slices; before slice k (k > 0) the block from the
  // previous CP rank must have arrived; each block received is passed on to the next rank.
  OpId write_ring(ComputeChain& chain, const PassStreams& streams, const LayerStep& step,
                  const OpTag& tag) {
    if (aggregated() && step.ring_hops > 1) {
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

  // ANALYTIC and AUTO are coarser than AGGREGATED: they merge ring steps too.
  bool aggregated() const {
    const auto fidelity = s_.scenario.sim().fidelity();
    return fidelity == config::Simulation::AGGREGATED || fidelity == config::Simulation::ANALYTIC ||
           fidelity == config::Simulation::AUTO;
  }

  // The kernel in hops + 1 equal slices (or, with `first_slice`, the first one replaced by it).
  OpId write_ring_hops(ComputeChain& chain, const PassStreams& streams, const LayerStep& step,
                       const OpTag& tag, const LayerStep* first_slice) {
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

  // Expert kernels do the work of the tokens this rank's experts received.
  LayerStep scaled_by_load(const LayerStep& step, const OpTag& tag) const {
    if (!step.scales_with_expert_load) return step;
    const auto& shares = layer_shares(tag);
    if (shares.empty()) return step;
    const double factor = shares[s_.layout.ep_index(rank_)] * static_cast<double>(shares.size());
    LayerStep scaled = step;
    scaled.flops *= factor;
    scaled.hbm_bytes *= factor;
    return scaled;
  }

  const std::vector<double>& layer_shares(const OpTag& tag) const {
    // Multi-token-prediction modules (in the head, layer -1) route like the last layer.
    const size_t layer =
        tag.layer >= 0 ? static_cast<size_t>(tag.layer) : s_.expert_rank_shares.size() - 1;
    return s_.expert_rank_shares[layer];
  }

  uint32_t routing_weights(WeightedAllToAll weighting, const OpTag& tag) {
    const auto& shares = layer_shares(tag);
    if (shares.empty() || s_.scenario.training().routing() <= config::Training::BALANCED) return 0;
    std::vector<double> table{static_cast<double>(weighting)};
    table.insert(table.end(), shares.begin(), shares.end());
    return writer_.graph().add_weights(std::move(table));
  }

  RankParams layer_params(int layer) const { return split_params(s_.model, s_.layout, layer); }
  // The embedding table, or the output head's matrix (none of its own when tied to a table this
  // stage already holds) with the final norm and the multi-token-prediction modules.
  RankParams block_params(const BlockSteps& block) const {
    const double table = s_.model.embedding_params() / s_.layout.tp();
    if (&block != &s_.head) return {table, 0};
    const bool shared_table = s_.model.tied_embeddings() && holds_embedding();
    return {(shared_table ? 0 : table) + static_cast<double>(s_.model.hidden()) +
                s_.model.mtp_params() / s_.layout.tp(),
            0};
  }
  bool holds_embedding() const {
    for (int c = 0; c < s_.map.chunks_per_stage(); ++c) {
      if (s_.map.starts_route({coords_.pp, c})) return true;
    }
    return false;
  }

  // Tied embeddings live where micro-batches enter and where they leave; when those are
  // different stages their gradients are summed over the pair. The pair is two pipeline stages
  // (Megatron's embedding group), so its time counts as pp: the first stage waits here for the
  // last one to drain the pipeline, which is not data-parallel communication (with DP1 it made
  // a second of "exposed dp" out of a 0.014 s transfer).
  void write_tied_embedding_sync() {
    if (!s_.model.tied_embeddings() || s_.layout.pp() == 1 || s_.map.dual()) return;
    const bool first = coords_.pp == 0;
    const bool last = coords_.pp == s_.layout.pp() - 1;
    if (!first && !last) return;
    const CommId pair =
        writer_.graph().add_communicator({rank_of_stage(0), rank_of_stage(s_.layout.pp() - 1)});
    const double bytes =
        s_.model.embedding_params() / s_.layout.tp() *
        bytes_per_element(to_data_type(s_.scenario.training().grad_reduce_dtype()));
    writer_.collective(main_, s_.dp_stream, "embedding.grad.allreduce", CollectiveKind::kAllReduce,
                       pair, bytes, CommDim::kPp, {Phase::kOptimizer, -1, -1});
  }

  const Shared& s_;
  RankId rank_;
  RankCoords coords_;
  RankWriter writer_;
  CommId tp_comm_;
  CommId cp_comm_;
  CommId ep_comm_;
  RankId cp_next_ = 0;
  RankId cp_prev_ = 0;
  GradientSync sync_;
  ComputeChain main_;
  ComputeChain overlap_;
  std::vector<int> final_pass_;
  std::map<std::pair<int, int>, OpId> stashed_;  // (micro-batch, layer) -> its copy to the host
};

OffloadStreams add_offload_streams(EventGraph& graph, bool used) {
  OffloadStreams s;
  if (!used) return s;
  s.to_host = graph.add_stream(kToHostStream, StreamKind::kCopy);
  s.to_device = graph.add_stream(kToDeviceStream, StreamKind::kCopy);
  s.host = graph.add_stream(kHostStream, StreamKind::kHost);
  return s;
}

PassStreams add_streams(EventGraph& graph, const std::string& suffix) {
  PassStreams s;
  s.compute = graph.add_stream(kComputeStream + suffix, StreamKind::kCompute);
  s.tp = graph.add_stream(kTpStream + suffix, StreamKind::kComm);
  s.pp = graph.add_stream(kPpStream, StreamKind::kComm);
  s.ep = graph.add_stream(kEpStream + suffix, StreamKind::kComm);
  s.cp = graph.add_stream(kCpStream + suffix, StreamKind::kComm);
  return s;
}

}  // namespace

DataType to_data_type(config::DType dtype) {
  switch (dtype) {
    case config::FP16:
      return DataType::kFp16;
    case config::FP8:
      return DataType::kFp8;
    case config::FP32:
      return DataType::kFp32;
    default:
      return DataType::kBf16;
  }
}

int micro_batches_per_replica(const config::Scenario& s) {
  const auto& t = s.training();
  return static_cast<int>(t.global_batch_size() / (t.micro_batch_size() * s.layout().dp()));
}

PipelineMap pipeline_map(const config::Scenario& s) {
  const bool dual = s.training().schedule() == config::Training::DUALPIPE;
  const int v = s.training().schedule() == config::Training::INTERLEAVED_1F1B
                    ? std::max(1, s.layout().virtual_stages())
                    : 1;
  return PipelineMap(s.layout().pp(), v, dual, static_cast<int>(s.model().num_layers()),
                     s.layout().first_stage_layers());
}

namespace {

RankShape rank_shape(const config::Scenario& s) {
  const auto& t = s.training();
  RankShape shape;
  shape.micro_batch = t.micro_batch_size();
  shape.seq_length = t.seq_length();
  shape.tp = s.layout().tp();
  shape.sequence_parallel = s.layout().sequence_parallel();
  shape.dtype = to_data_type(t.dtype());
  shape.cp = std::max(1, s.layout().cp());
  shape.ulysses = s.layout().cp_algorithm() == config::Layout::ULYSSES;
  shape.ep = std::max(1, s.layout().ep());
  shape.indexer_chunk_tokens = t.indexer_chunk_tokens();
  shape.materialized_attention = t.attention_impl() == config::Training::MATERIALIZED;
  return shape;
}

// Per layer, the expert-parallel ranks' shares of the routed tokens (empty for dense layers).
std::vector<std::vector<double>> expert_rank_shares(const config::Scenario& s,
                                                    const TransformerModel& model) {
  std::vector<std::vector<double>> shares(model.layers());
  int moe_layer = 0;
  for (int l = 0; l < model.layers(); ++l) {
    const MlpSpec& mlp = model.mlp(l);
    if (!mlp.moe) continue;
    shares[l] = rank_shares(expert_shares(s.training(), mlp.experts, moe_layer++),
                            std::max(1, s.layout().ep()));
  }
  return shares;
}

double kernel_flops(const std::vector<LayerStep>& steps) {
  double flops = 0;
  for (const LayerStep& step : steps) flops += step.flops;
  return flops;
}

// FLOPs of the first stage's chunk passes: what the zero-bubble play weighs passes by.
PassCosts estimated_pass_costs(const config::Scenario& s) {
  const TransformerModel model(s.model());
  const LayerRange layers = pipeline_map(s).layers({0, 0});
  const RankShape shape = rank_shape(s);
  PassCosts costs{0, 0, 0};
  for (int l = layers.first; l < layers.first + layers.count; ++l) {
    const BlockSteps block = model.layer_steps(l, shape);
    costs.forward += kernel_flops(block.forward);
    costs.backward_input += kernel_flops(block.backward_input);
    costs.backward_weight += kernel_flops(block.backward_weight);
    if (s.training().recompute() == config::Training::FULL)
      costs.backward_input += kernel_flops(block.forward);
  }
  return costs;
}

}  // namespace

std::vector<PassOrder> pipeline_orders(const config::Scenario& s) {
  const int p = s.layout().pp();
  const int m = micro_batches_per_replica(s);
  const auto schedule = s.training().schedule();
  if (schedule == config::Training::ZB_H1) return zb_h1_orders(p, m, estimated_pass_costs(s));
  std::vector<PassOrder> orders;
  for (int stage = 0; stage < p; ++stage) {
    switch (schedule) {
      case config::Training::GPIPE:
        orders.push_back(gpipe_order(stage, p, m));
        break;
      case config::Training::INTERLEAVED_1F1B:
        orders.push_back(interleaved_order(stage, p, std::max(1, s.layout().virtual_stages()), m));
        break;
      case config::Training::DUALPIPE:
        orders.push_back(dualpipe_order(stage, p, m));
        break;
      default:
        orders.push_back(one_f_one_b_order(stage, p, m));
        break;
    }
  }
  return orders;
}

RankParams split_params(const TransformerModel& model, const ParallelLayout& layout, int layer) {
  const double experts = model.layer_expert_params(layer);
  return {(model.layer_params(layer) - experts) / layout.tp(), experts / layout.ep()};
}

RankParams rank_params(const TransformerModel& model, const ParallelLayout& layout,
                       const PipelineMap& map, RankId rank) {
  const int stage = layout.coords(rank).pp;
  RankParams params;
  bool embedding = false, head = false;
  for (int c = 0; c < map.chunks_per_stage(); ++c) {
    const ChunkRef chunk{stage, c};
    const LayerRange layers = map.layers(chunk);
    for (int l = layers.first; l < layers.first + layers.count; ++l) {
      const RankParams p = split_params(model, layout, l);
      params.dense += p.dense;
      params.expert += p.expert;
    }
    embedding = embedding || map.starts_route(chunk);
    head = head || map.ends_route(chunk);
  }
  const double table = model.embedding_params() / layout.tp();
  if (embedding) params.dense += table;
  // The output head: its own matrix, or with tied embeddings a copy of the table unless this
  // stage already holds the table; the final norm; the multi-token-prediction modules.
  if (head && (!model.tied_embeddings() || !embedding)) params.dense += table;
  if (head) params.dense += static_cast<double>(model.hidden()) + model.mtp_params() / layout.tp();
  return params;
}

double params_on_rank(const TransformerModel& model, const ParallelLayout& layout,
                      const PipelineMap& map, RankId rank) {
  return rank_params(model, layout, map, rank).total();
}

TrainingStep build_training_step(const config::Scenario& scenario,
                                 const std::vector<bool>& only_ranks) {
  const TransformerModel model(scenario.model());
  const ParallelLayout layout = ParallelLayout::from_config(scenario.layout());
  const PipelineMap map = pipeline_map(scenario);
  const auto orders = pipeline_orders(scenario);
  const int m = micro_batches_per_replica(scenario);
  if (m < 1) throw std::invalid_argument("training step: no micro-batch per data-parallel rank");
  const auto& t = scenario.training();
  const RankShape shape = rank_shape(scenario);
  std::vector<BlockSteps> layers;
  for (int l = 0; l < model.layers(); ++l) layers.push_back(model.layer_steps(l, shape));
  const BlockSteps embedding = model.embedding_steps(shape);
  const BlockSteps head = model.head_steps(shape);

  TrainingStep step{EventGraph(layout.num_ranks()), {}};
  EventGraph& graph = step.graph;
  const PassStreams main = add_streams(graph, "");
  const StreamId dp_stream = graph.add_stream(kDpStream, StreamKind::kComm);
  const PassStreams overlap = map.dual() ? add_streams(graph, kOverlapSuffix) : main;
  const auto shares = expert_rank_shares(scenario, model);
  const OffloadStreams offload =
      add_offload_streams(graph, t.offload_optimizer() || t.offload_activations());
  std::vector<double> offloaded_bytes;
  if (t.offload_activations()) {
    for (int l = 0; l < model.layers(); ++l) {
      offloaded_bytes.push_back(layer_activation_bytes(scenario, l));
    }
  }
  const RankStep::Shared shared{
      scenario, model, layout,  map,       layers, embedding, head,
      m,        main,  overlap, dp_stream, shares, offload,   offloaded_bytes};
  const auto ranks_to_write = static_cast<size_t>(
      only_ranks.empty() ? layout.num_ranks()
                         : std::count(only_ranks.begin(), only_ranks.end(), true));
  bool reserved = false;
  for (RankId r = 0; r < layout.num_ranks(); ++r) {
    if (!only_ranks.empty() && !only_ranks[r]) continue;
    RankStep(shared, &graph, r).write(orders[layout.coords(r).pp]);
    if (!reserved) {
      // Sized from the first rank written, with headroom for stages that differ: growing the
      // graph by doubling cost ~12% of the seed case's CPU in copies and page faults.
      graph.reserve(graph.size() * ranks_to_write * 3 / 2,
                    graph.num_deps() * ranks_to_write * 3 / 2);
      reserved = true;
    }
  }
  step.info.micro_batches = m;
  for (RankId r = 0; r < layout.num_ranks(); ++r) {
    step.info.params_per_rank.push_back(params_on_rank(model, layout, map, r));
  }
  step.info.tokens_per_step = static_cast<double>(t.global_batch_size() * t.seq_length());
  return step;
}

}  // namespace racksim
