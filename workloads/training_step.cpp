#include "workloads/training_step.h"

#include <stdexcept>

#include <fmt/format.h>

#include "workloads/pipeline_schedule.h"

namespace racksim {

namespace {

// Mixed-precision AdamW per parameter: reads the FP32 master weight, both moments and the FP32
// gradient (16 bytes), writes master weight and moments and the BF16 copy (14 bytes).
constexpr double kAdamBytesPerParam = 30;
constexpr double kAdamFlopsPerParam = 12;

// Send/recv tags between two neighbouring stages: activations and gradients of a micro-batch.
uint32_t activation_tag(int micro_batch) {
  return 2 * static_cast<uint32_t>(micro_batch);
}
uint32_t gradient_tag(int micro_batch) {
  return 2 * static_cast<uint32_t>(micro_batch) + 1;
}

// The compute stream of one rank as it is being written: the last compute operation, and the
// operations the next compute operation must wait for (a collective's result, a received
// activation, a send that must finish first).
struct ComputeChain {
  OpId last_compute = kNoOp;
  std::vector<OpId> pending;
};

class StepBuilder {
 public:
  StepBuilder(const config::Scenario& scenario)
      : scenario_(scenario),
        model_(scenario.model()),
        layout_(ParallelLayout::from_config(scenario.layout())),
        graph_(layout_.num_ranks()) {
    const auto& t = scenario.training();
    micro_batches_ =
        static_cast<int>(t.global_batch_size() / (t.micro_batch_size() * layout_.dp()));
    if (micro_batches_ < 1) throw std::invalid_argument("training step: no micro-batch per rank");
    layers_per_stage_ = static_cast<int>(model_.layers() / layout_.pp());
    shape_.micro_batch = t.micro_batch_size();
    shape_.seq_length = t.seq_length();
    shape_.tp = layout_.tp();
    shape_.sequence_parallel = scenario.layout().sequence_parallel();
    shape_.dtype = to_data_type(t.dtype());
    layer_ = model_.layer_steps(shape_);
    embedding_ = model_.embedding_steps(shape_);
    head_ = model_.head_steps(shape_);
    compute_ = graph_.add_stream(kComputeStream, StreamKind::kCompute);
    tp_stream_ = graph_.add_stream(kTpStream, StreamKind::kComm);
    pp_stream_ = graph_.add_stream(kPpStream, StreamKind::kComm);
    dp_stream_ = graph_.add_stream(kDpStream, StreamKind::kComm);
  }

  TrainingStep build() {
    for (RankId r = 0; r < layout_.num_ranks(); ++r) emit_rank(r);
    TrainingStep step{std::move(graph_), {}};
    step.info.micro_batches = micro_batches_;
    step.info.layers_per_stage = layers_per_stage_;
    for (RankId r = 0; r < layout_.num_ranks(); ++r) {
      step.info.params_per_rank.push_back(params_on_rank(model_, layout_, r));
    }
    step.info.tokens_per_step = static_cast<double>(scenario_.training().global_batch_size() *
                                                    scenario_.training().seq_length());
    return step;
  }

 private:
  void emit_rank(RankId rank) {
    const RankCoords c = layout_.coords(rank);
    const int stages = layout_.pp();
    const auto order = scenario_.training().schedule() == config::Training::GPIPE
                           ? gpipe_order(c.pp, stages, micro_batches_)
                           : one_f_one_b_order(c.pp, stages, micro_batches_);
    rank_ = rank;
    coords_ = c;
    tp_comm_ = graph_.add_communicator(layout_.tp_group(rank));
    ComputeChain chain;
    for (const PipelinePass& pass : order) {
      if (pass.kind == PassKind::kForward) {
        emit_forward(chain, pass.micro_batch);
      } else {
        emit_backward(chain, pass.micro_batch);
      }
    }
    emit_gradient_sync_and_optimizer(chain);
  }

  bool first_stage() const { return coords_.pp == 0; }
  bool last_stage() const { return coords_.pp == layout_.pp() - 1; }
  RankId neighbour(int stage_offset) const {
    RankCoords n = coords_;
    n.pp += stage_offset;
    return layout_.rank(n);
  }
  // Each TP rank sends its slice of the [micro-batch, sequence, hidden] activation.
  double p2p_bytes() const {
    return static_cast<double>(shape_.micro_batch * shape_.seq_length * model_.hidden()) *
           bytes_per_element(shape_.dtype) / layout_.tp();
  }

  OpContext context(StreamId stream, Phase phase, int micro_batch, int layer) const {
    return OpContext{rank_, stream, phase, micro_batch, static_cast<int16_t>(layer)};
  }

  void emit_steps(ComputeChain& chain, const std::vector<LayerStep>& steps, Phase phase,
                  int micro_batch, int layer) {
    for (const LayerStep& step : steps) {
      if (step.kind == LayerStep::Kind::kCompute) {
        const OpId id = graph_.add_compute(context(compute_, phase, micro_batch, layer), step.name,
                                           step.op_class, step.flops, step.hbm_bytes, shape_.dtype,
                                           chain.pending);
        chain.pending.clear();
        chain.last_compute = id;
      } else {
        // The collective reduces what the compute stream produced, or gathers what it was about
        // to consume (e.g. a received gradient), so it waits for both.
        std::vector<OpId> deps = chain.pending;
        if (chain.last_compute != kNoOp) deps.push_back(chain.last_compute);
        const OpId id =
            graph_.add_collective(context(tp_stream_, phase, micro_batch, layer), step.name,
                                  step.collective, tp_comm_, step.bytes, CommDim::kTp, deps);
        chain.pending.assign(1, id);
      }
    }
  }

  void emit_send(ComputeChain& chain, RankId peer, uint32_t tag, Phase phase, int micro_batch,
                 const char* label) {
    std::vector<OpId> deps;
    if (chain.last_compute != kNoOp) deps.push_back(chain.last_compute);
    // A send waits for everything the compute stream was waiting for too (e.g. the layer's last
    // TP all-reduce), since it ships that result.
    deps.insert(deps.end(), chain.pending.begin(), chain.pending.end());
    const OpId send = graph_.add_send(context(pp_stream_, phase, micro_batch, -1), label, peer, tag,
                                      p2p_bytes(), CommDim::kPp, deps);
    chain.pending.clear();
    if (!scenario_.training().pp_comm_overlap()) chain.pending.push_back(send);
  }

  void emit_recv(ComputeChain& chain, RankId peer, uint32_t tag, Phase phase, int micro_batch,
                 const char* label) {
    const OpId recv = graph_.add_recv(context(pp_stream_, phase, micro_batch, -1), label, peer, tag,
                                      p2p_bytes(), CommDim::kPp);
    chain.pending.push_back(recv);
  }

  int first_layer() const { return coords_.pp * layers_per_stage_; }

  void emit_forward(ComputeChain& chain, int mb) {
    if (!first_stage())
      emit_recv(chain, neighbour(-1), activation_tag(mb), Phase::kForward, mb, "recv.activation");
    if (first_stage()) emit_steps(chain, embedding_.forward, Phase::kForward, mb, -1);
    for (int l = 0; l < layers_per_stage_; ++l) {
      emit_steps(chain, layer_.forward, Phase::kForward, mb, first_layer() + l);
    }
    if (last_stage()) emit_steps(chain, head_.forward, Phase::kForward, mb, -1);
    if (!last_stage())
      emit_send(chain, neighbour(+1), activation_tag(mb), Phase::kForward, mb, "send.activation");
  }

  void emit_backward(ComputeChain& chain, int mb) {
    if (!last_stage())
      emit_recv(chain, neighbour(+1), gradient_tag(mb), Phase::kBackward, mb, "recv.gradient");
    if (last_stage()) emit_steps(chain, head_.backward, Phase::kBackward, mb, -1);
    const auto recompute = scenario_.training().recompute();
    for (int l = layers_per_stage_; l-- > 0;) {
      const int layer = first_layer() + l;
      if (recompute == config::Training::FULL) {
        emit_steps(chain, layer_.forward, Phase::kRecompute, mb, layer);
      } else if (recompute == config::Training::SELECTIVE) {
        emit_steps(chain, layer_.selective_recompute, Phase::kRecompute, mb, layer);
      }
      emit_steps(chain, layer_.backward, Phase::kBackward, mb, layer);
    }
    if (first_stage()) emit_steps(chain, embedding_.backward, Phase::kBackward, mb, -1);
    if (!first_stage())
      emit_send(chain, neighbour(-1), gradient_tag(mb), Phase::kBackward, mb, "send.gradient");
  }

  void emit_gradient_sync_and_optimizer(ComputeChain& chain) {
    const double grad_bytes =
        bytes_per_element(to_data_type(scenario_.training().grad_reduce_dtype()));
    std::vector<OpId> deps;
    if (chain.last_compute != kNoOp) deps.push_back(chain.last_compute);
    deps.insert(deps.end(), chain.pending.begin(), chain.pending.end());
    chain.pending.clear();
    // Tied embeddings live on the first and the last stage; their gradients are summed.
    if (model_.tied_embeddings() && layout_.pp() > 1 && (first_stage() || last_stage())) {
      RankCoords first = coords_, last = coords_;
      first.pp = 0;
      last.pp = layout_.pp() - 1;
      const CommId pair = graph_.add_communicator({layout_.rank(first), layout_.rank(last)});
      const double bytes = model_.embedding_params() / layout_.tp() * grad_bytes;
      const OpId id = graph_.add_collective(context(dp_stream_, Phase::kOptimizer, -1, -1),
                                            "embedding.grad.allreduce", CollectiveKind::kAllReduce,
                                            pair, bytes, CommDim::kDp, deps);
      chain.pending.push_back(id);
    }
    const double params = params_on_rank(model_, layout_, rank_);
    if (layout_.dp() > 1) {
      const CommId dp = graph_.add_communicator(layout_.dp_group(rank_));
      const OpId id = graph_.add_collective(context(dp_stream_, Phase::kOptimizer, -1, -1),
                                            "grad.allreduce", CollectiveKind::kAllReduce, dp,
                                            params * grad_bytes, CommDim::kDp, deps);
      chain.pending.push_back(id);
    }
    graph_.add_compute(context(compute_, Phase::kOptimizer, -1, -1), "optimizer.adam",
                       OpClass::kElementwise, params * kAdamFlopsPerParam,
                       params * kAdamBytesPerParam, DataType::kFp32, chain.pending);
    chain.pending.clear();
  }

  const config::Scenario& scenario_;
  DenseTransformer model_;
  ParallelLayout layout_;
  EventGraph graph_;
  RankShape shape_;
  BlockSteps layer_, embedding_, head_;
  int micro_batches_ = 0;
  int layers_per_stage_ = 0;
  StreamId compute_ = 0, tp_stream_ = 0, pp_stream_ = 0, dp_stream_ = 0;
  // The rank being written.
  RankId rank_ = 0;
  RankCoords coords_;
  CommId tp_comm_ = 0;
};

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

double params_on_rank(const DenseTransformer& model, const ParallelLayout& layout, RankId rank) {
  const RankCoords c = layout.coords(rank);
  const double layers = static_cast<double>(model.layers() / layout.pp());
  double params = layers * model.layer_params() / layout.tp();
  const bool first = c.pp == 0;
  const bool last = c.pp == layout.pp() - 1;
  const double table = model.embedding_params() / layout.tp();
  if (first) params += table;
  // The output head: its own matrix, or with tied embeddings a copy of the table when the last
  // stage is not also the first.
  if (last && (!model.tied_embeddings() || !first)) params += table;
  if (last) params += static_cast<double>(model.hidden());  // final norm
  return params;
}

TrainingStep build_training_step(const config::Scenario& scenario) {
  return StepBuilder(scenario).build();
}

}  // namespace racksim
