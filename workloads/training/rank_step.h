// Writes one rank's part of a training step (training_step.h): its passes in the pipeline
// schedule's order, the tensor-, context- and expert-parallel collectives inside each layer, the
// activations and gradients exchanged with neighbouring stages, and the data-parallel gradient
// sync. Private to the generator; its methods are split by concern:
//   rank_step.cpp          passes: forward, backward, split weight pass, DualPipe pairs
//   rank_step_ring.cpp     rings of neighbours: ring attention's blocks and kernel slices
//   rank_step_tp_overlap.cpp  TP collectives overlapped with the GEMMs beside them
//   rank_step_offload.cpp  activation offload to the host and its prefetch
//   rank_step_params.cpp   parameters per block, expert load, tied-embedding sync
//   rank_step_gathers.cpp  whole-chunk parameter gathers (Megatron-Core's unbucketed chunks)
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "graph/event_graph.h"
#include "workloads/training/deepspeed_schedule.h"
#include "workloads/training/gradient_sync.h"
#include "workloads/training/head_deferral.h"
#include "workloads/training/rank_writer.h"
#include "workloads/training/step_shape.h"
#include "workloads/training/training_step.h"

namespace racksim {

// The neighbours of a rank in a ring along one dimension, and the names and tags of its blocks.
struct RingLink {
  CommDim dim = CommDim::kCp;
  RankId next = 0;
  RankId prev = 0;
  uint32_t tag_base = 0;  // tells this ring's blocks from another ring's between the same pair
  const char* send_suffix = "";
  const char* recv_suffix = "";
};

// The stream a collective or ring transfer along `dim` runs on (TP's for anything not EP or CP).
StreamId comm_stream(const PassStreams& streams, CommDim dim);

class RankStep {
 public:
  struct Shared {
    const TrainingPlan& plan;  // model, layout, pipeline map, micro-batches, expert shares
    const std::vector<BlockSteps>& layers;
    const BlockSteps& embedding;
    const BlockSteps& head;
    // The MTP modules where they run in a chunk of their own (empty where they run in the head).
    const BlockSteps& mtp;
    const HeadDeferral& head_deferral;  // the head split for training.defer_embedding_wgrad
    PassStreams main;
    PassStreams overlap;
    StreamId dp_stream;
    OffloadStreams offload_streams;
    // Per layer, what it keeps for its backward (the bytes activation offload moves); empty
    // without activation offload.
    const std::vector<double>& offloaded_activation_bytes;
    bool merge_ring_hops;  // StepGraphOptions::merge_ring_hops
    // The node-deduplicated dispatch's weights table in the graph and its transpose's (the
    // combine's), or 0 (TrainingPlan::dedup_dispatch).
    uint32_t dedup_dispatch_weights = 0;
    uint32_t dedup_combine_weights = 0;
  };

  RankStep(const Shared& shared, EventGraph* graph, RankId rank);
  void write(const PassOrder& order);

 private:
  // The passes in order, each with its own transfers (every schedule but DeepSpeed's).
  void write_passes(const PassOrder& order);
  GradientSyncConfig sync_config(EventGraph* graph) const;
  // For each local chunk, the index of the pass after which no later micro-batch adds to its
  // weight gradients.
  std::vector<int> last_backward_of_each_chunk(const PassOrder& order) const;
  // DualPipe: two passes of different micro-batches run at once on two compute streams; both
  // start after the previous work of both streams and the next pass waits for both.
  void write_overlapped_pair(const PipelinePass& a, const PipelinePass& b, int index);
  // DeepSpeed's TrainSchedule (training.pipeline_exchange DEEPSPEED): the passes of `order` with
  // each transfer on its own where DeepSpeed issues it (deepspeed_schedule.h).
  void write_deepspeed_passes(const PassOrder& order);
  void write_deepspeed_transfer(const PipelineInstruction& instruction);
  // The data a pass needs from a neighbouring stage: the activation entering a forward, the
  // gradient entering a backward.
  void write_pass_input(ComputeChain& chain, const PassStreams& streams, const PipelinePass& pass);
  void write_pass(ComputeChain& chain, const PassStreams& streams, const PipelinePass& pass,
                  int index, bool inputs_written = false);
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
  uint32_t numa_node_of(RankId rank) const;
  RankId rank_of_stage(int stage) const;
  // Whether the visit's chunk runs the MTP modules on their own (PipelineMap).
  bool runs_standalone_mtp(const Visit& v) const;
  // Each TP (and CP) rank sends its slice of the [micro-batch, sequence, hidden] activation.
  // What a pipeline transfer between route positions `hop` and `hop` + 1 carries.
  double p2p_bytes(int hop) const;
  // One pipeline transfer of micro-batch `mb` seen from route position `pos`: the neighbouring
  // stage's rank, the tag both sides match it by, the bytes it carries.
  struct PipelineHop {
    RankId peer;
    uint32_t tag;
    double bytes;
  };
  PipelineHop pipeline_hop(PipelineTransfer transfer, const std::vector<ChunkRef>& route, int pos,
                           int mb) const;
  // A transfer both sides wait for (DeepSpeed's): the receiver tells the sender it has reached the
  // transfer (a message of no bytes back, as NCCL's receiver posts its buffer) and the data
  // follows; each side's next kernel waits for the transfer's end.
  void receive_when_posted(const PipelineHop& hop, const char* name, const OpTag& op_tag);
  void send_when_posted(const PipelineHop& hop, const char* name, const OpTag& op_tag);
  bool blocking_sends() const;
  // What a pipeline hand-off of `bytes` costs this stage's compute stream beyond the transfer
  // (hardware.host.pipeline_handoff_bytes_per_s): an operation the chain's next kernel waits for.
  void write_handoff(ComputeChain& chain, StreamId compute, double bytes, const OpTag& tag);
  void write_forward(const Visit& v);
  void write_backward(const Visit& v);
  // Activation offload: what layer `l` keeps for its backward goes to pinned host memory once
  // its forward is done, on the device-to-host copy stream, while the next layer computes.
  void stash_activations(const ComputeChain& chain, int mb, int l);
  // ... and comes back before the layer's backward (or recompute). Double buffering: the copy
  // starts when the backward of the layer above starts (`prefetch_after`), so at most two
  // layers' activations are in HBM; the first layer of a pass waits for the previous kernel.
  void fetch_activations(ComputeChain& chain, int mb, int l, OpId prefetch_after);
  // Returns the first kernel written.
  OpId head_or_embedding_backward(const Visit& v, const BlockSteps& block,
                                  const std::vector<LayerStep>& steps, bool split,
                                  OpId prefetch_after);
  // W: the weight gradients deferred by a split backward.
  void write_weight(const Visit& v);
  // training.defer_embedding_wgrad: whether this backward pass keeps the output layer's weight
  // gradient for the drain (a whole backward on the last stage, within the limit), and the drain
  // itself, after the rank's last pass: the kept GEMMs, then the head's gradients are ready.
  bool defers_head_wgrad(bool split) const;
  void drain_deferred_head_wgrad();
  // Writes the steps; returns the first kernel written (kNoOp if none).
  OpId write_steps(ComputeChain& chain, const PassStreams& streams,
                   const std::vector<LayerStep>& steps, const OpTag& tag);
  void write_collective(ComputeChain& chain, const PassStreams& streams, const LayerStep& step,
                        const OpTag& tag);
  // A ring (ring attention over CP ranks, Transformer Engine's ring exchange over TP ranks): the
  // kernel in hops + 1 slices; before slice k (k > 0) the block from the previous rank must
  // have arrived; each block received is passed on to the next rank.
  OpId write_ring(ComputeChain& chain, const PassStreams& streams, const LayerStep& step,
                  const OpTag& tag, const RingLink& link);
  // The kernel in hops + 1 equal slices (or, with `first_slice`, the first one replaced by it).
  OpId write_ring_hops(ComputeChain& chain, const PassStreams& streams, const LayerStep& step,
                       const OpTag& tag, const RingLink& link, const LayerStep* first_slice);
  // training.tp_comm_overlap: when steps[i] and steps[i + 1] are a TP collective and the linear
  // layer's GEMM it overlaps with (either order), writes them overlapped and returns 2, with
  // the first kernel in `first`; otherwise writes nothing and returns 0.
  size_t write_tp_overlap(ComputeChain& chain, const PassStreams& streams,
                          const std::vector<LayerStep>& steps, size_t i, const OpTag& tag,
                          OpId* first);
  // FP8 current scaling under sequence parallelism: when steps[i] all-gathers the operand of the
  // linear layer's GEMM at steps[i + 1], the ranks agree one amax over the TP group first (a
  // one-scalar all-reduce the chain waits for), so every shard is cast with one scale.
  void write_fp8_amax_reduction(ComputeChain& chain, const PassStreams& streams,
                                const std::vector<LayerStep>& steps, size_t i, const OpTag& tag);
  // All-gather then GEMM: the GEMM (a fused backward's input-gradient half) in tp slices, one
  // shard arriving from the TP neighbour before each slice after the first.
  OpId write_ring_exchange(ComputeChain& chain, const PassStreams& streams, const LayerStep& gather,
                           const LayerStep& gemm, const OpTag& tag);
  // GEMM then reduce-scatter: the GEMM in chunks, each chunk's reduce-scatter running under the
  // next chunk.
  OpId write_pipelined_scatter(ComputeChain& chain, const PassStreams& streams,
                               const LayerStep& gemm, const LayerStep& scatter, const OpTag& tag);
  // Fused backward GEMM then reduce-scatter: the input gradient's reduce-scatter runs under the
  // weight-gradient GEMM.
  OpId write_bulk_scatter(ComputeChain& chain, const PassStreams& streams, const LayerStep& gemm,
                          const LayerStep& scatter, const OpTag& tag);
  // Expert kernels do the work of the tokens this rank's experts received.
  LayerStep scaled_by_load(const LayerStep& step, const OpTag& tag) const;
  const std::vector<double>& layer_shares(const OpTag& tag) const;
  uint32_t routing_weights(WeightedAllToAll weighting, const OpTag& tag);
  RankParams layer_params(int layer) const;
  // The embedding table, or the output head's matrix (none of its own when tied to a table this
  // stage already holds) with the final norm and the multi-token-prediction modules.
  RankParams block_params(const BlockSteps& block) const;
  bool holds_embedding() const;
  // The first stage's first chunk, the one Megatron-Core buckets.
  bool first_of_model(int local_chunk) const { return coords_.pp == 0 && local_chunk == 0; }
  // All the parameters of one local chunk on this rank.
  RankParams chunk_params(int local_chunk) const;
  // Whole-chunk parameter gathers (GradientSync::gathers_chunks_whole), rank_step_gathers.cpp:
  // when each is issued, what waits for it.
  void plan_chunk_gathers(const PassOrder& order);
  void wait_for_chunk_gather(const Visit& v, OpId before);
  void issue_due_chunk_gathers(OpId before);
  void issue_chunk_gather(int local_chunk, const std::vector<OpId>& deps);
  // Aligned reductions (training.align_grad_reduce with virtual stages): after which backward
  // pass, counted in the rank's order, each chunk's held reduction is launched.
  void plan_aligned_reductions(const PassOrder& order);
  void release_due_reductions(const Visit& v);
  // Tied embeddings live where micro-batches enter and where they leave; when those are
  // different stages their gradients are summed over the pair. The pair is two pipeline stages
  // (Megatron's embedding group), so its time counts as pp: the first stage waits here for the
  // last one to drain the pipeline, which is not data-parallel communication (with DP1 it made
  // a second of "exposed dp" out of a 0.014 s transfer).
  void write_tied_embedding_sync();
  const Shared& s_;
  RankId rank_;
  RankCoords coords_;
  RankWriter writer_;
  CommId tp_comm_;
  CommId cp_comm_;
  CommId ep_comm_;
  RingLink cp_ring_;
  RingLink tp_ring_;
  bool tp_overlap_ = false;        // training.tp_comm_overlap with tp > 1
  bool fp8_amax_over_tp_ = false;  // FP8 current scaling, sequence parallelism, tp > 1
  GradientSync sync_;
  ComputeChain main_;
  ComputeChain overlap_;
  std::vector<int> final_pass_;
  // Per local chunk under whole-chunk gathers (empty otherwise): the forward pass, counted in the
  // rank's order, before which its gather is issued (kIssuedByItsForward: its own first forward),
  // the gather once issued, and whether a forward has waited for it.
  static constexpr int kIssuedByItsForward = -1;
  std::vector<int> gather_due_at_;
  std::vector<std::vector<OpId>> chunk_gather_;
  std::vector<bool> gather_issued_;
  std::vector<bool> gather_waited_;
  int forwards_written_ = 0;
  // Per backward pass (counted in the rank's order), the chunks whose reductions follow it.
  std::vector<std::vector<int>> reductions_after_;
  int backwards_written_ = 0;
  std::vector<int> deferred_head_wgrad_;         // micro-batches whose output-layer wgrad waits
  std::map<std::pair<int, int>, OpId> stashed_;  // (micro-batch, layer) -> its copy to the host
};

}  // namespace racksim
