#include "workloads/transformer.h"

#include <stdexcept>

namespace racksim {

namespace {

// Backward of a GEMM runs two GEMMs of the forward's size (input and weight gradients).
constexpr double kGemmBackwardFactor = 2.0;
// FlashAttention-2 backward runs five matmuls against the forward's two.
constexpr double kAttentionBackwardFlopFactor = 2.5;
constexpr double kBackwardBytesFactor = 2.0;
// LayerNorm / RMSNorm: about 8 FLOPs per element (mean, variance, scale, shift).
constexpr double kNormFlopsPerElement = 8.0;

LayerStep compute(std::string name, OpClass op_class, double flops, double hbm_bytes) {
  LayerStep s;
  s.kind = LayerStep::Kind::kCompute;
  s.name = std::move(name);
  s.op_class = op_class;
  s.flops = flops;
  s.hbm_bytes = hbm_bytes;
  return s;
}

// C[m,n] = A[m,k] B[k,n]: 2mkn FLOPs, reads A and B and writes C once.
LayerStep gemm(std::string name, double m, double k, double n, double elem_bytes) {
  return compute(std::move(name), OpClass::kGemm, 2 * m * k * n,
                 elem_bytes * (m * k + k * n + m * n));
}

LayerStep elementwise(std::string name, double elements_touched, double flops, double elem_bytes) {
  return compute(std::move(name), OpClass::kElementwise, flops, elem_bytes * elements_touched);
}

LayerStep tp_collective(std::string name, CollectiveKind kind, double bytes) {
  LayerStep s;
  s.kind = LayerStep::Kind::kTpCollective;
  s.name = std::move(name);
  s.collective = kind;
  s.bytes = bytes;
  return s;
}

LayerStep backward_of(const LayerStep& fwd) {
  if (fwd.kind != LayerStep::Kind::kCompute) return fwd;
  const double flop_factor =
      fwd.op_class == OpClass::kAttention ? kAttentionBackwardFlopFactor : kGemmBackwardFactor;
  return compute(fwd.name + ".bwd", fwd.op_class, fwd.flops * flop_factor,
                 fwd.hbm_bytes * kBackwardBytesFactor);
}

// The collectives that enter and leave a tensor-parallel region (Megatron's f and g). Without
// sequence parallelism the region's output is all-reduced; with it the input is all-gathered
// and the output reduce-scattered.
struct TpRegion {
  int tp;
  bool sequence_parallel;
  double activation_bytes;  // full [tokens, hidden] tensor

  void enter(std::vector<LayerStep>& steps, const std::string& name) const {
    if (tp > 1 && sequence_parallel) {
      steps.push_back(
          tp_collective(name + ".allgather", CollectiveKind::kAllGather, activation_bytes));
    }
  }
  void leave(std::vector<LayerStep>& steps, const std::string& name) const {
    if (tp == 1) return;
    if (sequence_parallel) {
      steps.push_back(
          tp_collective(name + ".reducescatter", CollectiveKind::kReduceScatter, activation_bytes));
    } else {
      steps.push_back(
          tp_collective(name + ".allreduce", CollectiveKind::kAllReduce, activation_bytes));
    }
  }
};

}  // namespace

DenseTransformer::DenseTransformer(const config::Model& model)
    : hidden_(model.hidden_size()),
      layers_(model.num_layers()),
      heads_(model.num_heads()),
      kv_heads_(model.has_num_kv_heads() ? model.num_kv_heads() : model.num_heads()),
      head_dim_(model.has_head_dim()
                    ? model.head_dim()
                    : (model.num_heads() > 0 ? model.hidden_size() / model.num_heads() : 0)),
      ffn_(model.ffn_hidden_size()),
      vocab_(model.vocab_size()),
      gated_(model.activation() != config::Model::GELU),
      tied_(model.tie_embeddings()) {
  if (hidden_ <= 0 || layers_ <= 0 || heads_ <= 0 || kv_heads_ <= 0 || head_dim_ <= 0 ||
      ffn_ <= 0 || vocab_ <= 0) {
    throw std::invalid_argument("transformer: every model dimension must be positive");
  }
}

double DenseTransformer::layer_params() const {
  const double h = static_cast<double>(hidden_);
  const double q = static_cast<double>(heads_ * head_dim_);
  const double kv = static_cast<double>(kv_heads_ * head_dim_);
  const double attention = h * (q + 2 * kv) + q * h;
  const double mlp = (gated_ ? 3.0 : 2.0) * h * static_cast<double>(ffn_);
  const double norms = 2 * h;
  return attention + mlp + norms;
}

double DenseTransformer::total_params() const {
  const double final_norm = static_cast<double>(hidden_);
  return static_cast<double>(layers_) * layer_params() + embedding_params() * (tied_ ? 1 : 2) +
         final_norm;
}

double DenseTransformer::active_params() const {
  const double norms = 2.0 * static_cast<double>(hidden_);
  return static_cast<double>(layers_) * (layer_params() - norms) + embedding_params();
}

double DenseTransformer::attention_coeff(bool causal_halving) const {
  const double full = 12.0 * static_cast<double>(layers_ * heads_ * head_dim_);
  return causal_halving ? full / 2 : full;
}

double DenseTransformer::model_flops_per_token(int64_t seq_length, bool causal_halving) const {
  return 6 * active_params() + attention_coeff(causal_halving) * static_cast<double>(seq_length);
}

double DenseTransformer::layer_forward_flops_per_token(int64_t seq_length,
                                                       bool causal_halving) const {
  const double norms = 2.0 * static_cast<double>(hidden_);
  const double layer_weights = static_cast<double>(layers_) * (layer_params() - norms);
  return 2 * layer_weights + attention_coeff(causal_halving) * static_cast<double>(seq_length) / 3;
}

BlockSteps DenseTransformer::layer_steps(const RankShape& shape) const {
  const double e = bytes_per_element(shape.dtype);
  const double t = shape.tp;
  const double tokens = static_cast<double>(shape.micro_batch * shape.seq_length);
  const double h = static_cast<double>(hidden_);
  const double q = static_cast<double>(heads_ * head_dim_) / t;  // local query width
  const double qkv = static_cast<double>((heads_ + 2 * kv_heads_) * head_dim_) / t;
  const double f = static_cast<double>(ffn_) / t;
  const double s = static_cast<double>(shape.seq_length);
  // Outside the tensor-parallel regions, sequence parallelism splits the tokens over TP ranks.
  const double norm_tokens = shape.sequence_parallel ? tokens / t : tokens;
  const TpRegion region{shape.tp, shape.sequence_parallel, tokens * h * e};

  BlockSteps b;
  auto& fw = b.forward;
  // Norm reads x and writes y; the residual add that precedes it reads two tensors.
  fw.push_back(
      elementwise("attn.norm", 2 * norm_tokens * h, kNormFlopsPerElement * norm_tokens * h, e));
  region.enter(fw, "attn");
  fw.push_back(gemm("attn.qkv", tokens, h, qkv, e));
  // Causal attention: QK^T and AV over half of the s x s scores; FlashAttention reads Q, K, V
  // and writes the output without materialising the scores.
  const double attention_flops = 4 * tokens * s * q / 2;
  const LayerStep core =
      compute("attn.core", OpClass::kAttention, attention_flops, e * tokens * (qkv + q));
  fw.push_back(core);
  fw.push_back(gemm("attn.proj", tokens, q, h, e));
  region.leave(fw, "attn");
  fw.push_back(elementwise("mlp.norm", 5 * norm_tokens * h,
                           (kNormFlopsPerElement + 1) * norm_tokens * h, e));
  region.enter(fw, "mlp");
  fw.push_back(gemm("mlp.up", tokens, h, (gated_ ? 2 : 1) * f, e));
  // SwiGLU reads gate and up and writes their product; GELU reads and writes one tensor.
  fw.push_back(elementwise("mlp.act", (gated_ ? 3 : 2) * tokens * f, 8 * tokens * f, e));
  fw.push_back(gemm("mlp.down", tokens, f, h, e));
  region.leave(fw, "mlp");

  // Backward runs the blocks in reverse. The collective that closed a region in the forward
  // becomes the one that opens it in the backward (all-reduce stays all-reduce; reduce-scatter
  // turns into all-gather and back), so the region is re-entered from its end.
  auto& bw = b.backward;
  const TpRegion back_region = region;
  auto region_backward = [&](const std::string& name, size_t first, size_t last) {
    // [first, last] are the forward compute steps of one region, in forward order.
    if (shape.tp > 1 && shape.sequence_parallel) {
      bw.push_back(tp_collective(name + ".bwd.allgather", CollectiveKind::kAllGather,
                                 back_region.activation_bytes));
    }
    for (size_t i = last + 1; i-- > first;) {
      if (fw[i].kind == LayerStep::Kind::kCompute) bw.push_back(backward_of(fw[i]));
    }
    if (shape.tp > 1) {
      const CollectiveKind kind =
          shape.sequence_parallel ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
      bw.push_back(
          tp_collective(name + (shape.sequence_parallel ? ".bwd.reducescatter" : ".bwd.allreduce"),
                        kind, back_region.activation_bytes));
    }
  };
  auto index_of = [&](const std::string& name) {
    for (size_t i = 0; i < fw.size(); ++i) {
      if (fw[i].name == name) return i;
    }
    throw std::logic_error("transformer: no step " + name);
  };
  region_backward("mlp", index_of("mlp.up"), index_of("mlp.down"));
  bw.push_back(backward_of(fw[index_of("mlp.norm")]));
  region_backward("attn", index_of("attn.qkv"), index_of("attn.proj"));
  bw.push_back(backward_of(fw[index_of("attn.norm")]));

  LayerStep recompute_core = core;
  recompute_core.name = "attn.core.recompute";
  b.selective_recompute.push_back(recompute_core);
  return b;
}

BlockSteps DenseTransformer::embedding_steps(const RankShape& shape) const {
  const double e = bytes_per_element(shape.dtype);
  const double tokens = static_cast<double>(shape.micro_batch * shape.seq_length);
  const double h = static_cast<double>(hidden_);
  BlockSteps b;
  // A vocabulary-parallel lookup: each TP rank writes the rows it owns, then the partial
  // results are summed over the TP group.
  b.forward.push_back(elementwise("embedding", tokens * h, 0, e));
  if (shape.tp > 1) {
    const CollectiveKind kind =
        shape.sequence_parallel ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
    b.forward.push_back(tp_collective("embedding.tp", kind, tokens * h * e));
  }
  // The gradient is scattered into the table rows. With sequence parallelism it first has to be
  // gathered back from the sequence shards (the backward of the reduce-scatter).
  if (shape.tp > 1 && shape.sequence_parallel) {
    b.backward.push_back(
        tp_collective("embedding.bwd.allgather", CollectiveKind::kAllGather, tokens * h * e));
  }
  b.backward.push_back(elementwise("embedding.bwd", 2 * tokens * h, tokens * h, e));
  return b;
}

BlockSteps DenseTransformer::head_steps(const RankShape& shape) const {
  const double e = bytes_per_element(shape.dtype);
  const double t = shape.tp;
  const double tokens = static_cast<double>(shape.micro_batch * shape.seq_length);
  const double h = static_cast<double>(hidden_);
  const double v = static_cast<double>(vocab_) / t;
  const double norm_tokens = shape.sequence_parallel ? tokens / t : tokens;
  constexpr double kFp32 = 4;
  BlockSteps b;
  auto& fw = b.forward;
  fw.push_back(
      elementwise("final.norm", 2 * norm_tokens * h, kNormFlopsPerElement * norm_tokens * h, e));
  if (shape.tp > 1 && shape.sequence_parallel) {
    fw.push_back(tp_collective("lm_head.allgather", CollectiveKind::kAllGather, tokens * h * e));
  }
  fw.push_back(gemm("lm_head", tokens, h, v, e));
  // Vocabulary-parallel cross-entropy in FP32: read the logits, softmax, pick the target.
  fw.push_back(elementwise("loss", 3 * tokens * v * kFp32 / e, 5 * tokens * v, e));
  if (shape.tp > 1) {
    // max, sum of exponentials and target logit, one FP32 value each per token
    fw.push_back(tp_collective("loss.allreduce", CollectiveKind::kAllReduce, 3 * tokens * kFp32));
  }
  auto& bw = b.backward;
  bw.push_back(elementwise("loss.bwd", 2 * tokens * v, 2 * tokens * v, e));
  bw.push_back(backward_of(fw[shape.tp > 1 && shape.sequence_parallel ? 2 : 1]));
  if (shape.tp > 1) {
    const CollectiveKind kind =
        shape.sequence_parallel ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
    bw.push_back(tp_collective("lm_head.bwd.tp", kind, tokens * h * e));
  }
  bw.push_back(backward_of(fw[0]));
  return b;
}

}  // namespace racksim
