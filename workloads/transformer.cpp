#include "workloads/transformer.h"

#include <stdexcept>

namespace racksim {

namespace {

// LayerNorm / RMSNorm: about 8 FLOPs per element (mean, variance, scale, shift).
constexpr double kNormFlopsPerElement = 8.0;
constexpr double kFp32Bytes = 4;

double tokens_of(const RankShape& shape) {
  return static_cast<double>(shape.micro_batch * shape.seq_length);
}

// Outside the tensor-parallel regions, sequence parallelism splits the tokens over TP ranks.
double norm_tokens_of(const RankShape& shape) {
  return shape.sequence_parallel ? tokens_of(shape) / shape.tp : tokens_of(shape);
}

}  // namespace

TransformerModel::TransformerModel(const config::Model& model)
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

double TransformerModel::layer_active_params(int) const {
  const double h = static_cast<double>(hidden_);
  const double q = static_cast<double>(heads_ * head_dim_);
  const double kv = static_cast<double>(kv_heads_ * head_dim_);
  const double attention = h * (q + 2 * kv) + q * h;
  const double mlp = (gated_ ? 3.0 : 2.0) * h * static_cast<double>(ffn_);
  return attention + mlp;
}

double TransformerModel::layer_params(int layer) const {
  const double norms = 2.0 * static_cast<double>(hidden_);
  return layer_active_params(layer) + norms;
}

double TransformerModel::total_params() const {
  double total = embedding_params() * (tied_ ? 1 : 2) + static_cast<double>(hidden_);
  for (int l = 0; l < layers_; ++l) total += layer_params(l);
  return total;
}

double TransformerModel::active_params() const {
  double n = embedding_params();  // the output head
  for (int l = 0; l < layers_; ++l) n += layer_active_params(l);
  return n;
}

double TransformerModel::attention_coeff(bool causal_halving) const {
  const double full = 12.0 * static_cast<double>(layers_ * heads_ * head_dim_);
  return causal_halving ? full / 2 : full;
}

double TransformerModel::model_flops_per_token(int64_t seq_length, bool causal_halving) const {
  return 6 * active_params() + attention_coeff(causal_halving) * static_cast<double>(seq_length);
}

double TransformerModel::layer_forward_flops_per_token(int64_t seq_length,
                                                       bool causal_halving) const {
  return 2 * (active_params() - embedding_params()) +
         attention_coeff(causal_halving) * static_cast<double>(seq_length) / 3;
}

void TransformerModel::attention_block(const RankShape& shape, BlockSteps* block) const {
  const double e = bytes_per_element(shape.dtype);
  const double t = shape.tp;
  const double tokens = tokens_of(shape);
  const double norm_tokens = norm_tokens_of(shape);
  const double h = static_cast<double>(hidden_);
  const double q = static_cast<double>(heads_ * head_dim_) / t;  // local query width
  const double qkv = static_cast<double>((heads_ + 2 * kv_heads_) * head_dim_) / t;
  const double s = static_cast<double>(shape.seq_length);
  auto& fw = block->forward;
  fw.push_back(elementwise_step("attn.norm", 2 * norm_tokens * h,
                                kNormFlopsPerElement * norm_tokens * h, e));
  open_tp_region(fw, "attn", shape.tp, shape.sequence_parallel, tokens * h * e);
  fw.push_back(gemm_step("attn.qkv", tokens, h, qkv, e));
  // Causal attention: QK^T and AV over half of the s x s scores; FlashAttention reads Q, K, V
  // and writes the output without materialising the scores.
  const LayerStep core = attention_step("attn.core", 4 * tokens * s * q / 2, e * tokens * (qkv + q));
  fw.push_back(core);
  fw.push_back(gemm_step("attn.proj", tokens, q, h, e));
  close_tp_region(fw, "attn", shape.tp, shape.sequence_parallel, tokens * h * e);
  LayerStep recompute = core;
  recompute.name = "attn.core.recompute";
  block->selective_recompute.push_back(recompute);
}

void TransformerModel::mlp_block(const RankShape& shape, BlockSteps* block) const {
  const double e = bytes_per_element(shape.dtype);
  const double tokens = tokens_of(shape);
  const double norm_tokens = norm_tokens_of(shape);
  const double h = static_cast<double>(hidden_);
  const double f = static_cast<double>(ffn_) / shape.tp;
  auto& fw = block->forward;
  // The residual add before the norm reads two tensors; the norm reads one and writes one.
  fw.push_back(elementwise_step("mlp.norm", 5 * norm_tokens * h,
                                (kNormFlopsPerElement + 1) * norm_tokens * h, e));
  open_tp_region(fw, "mlp", shape.tp, shape.sequence_parallel, tokens * h * e);
  fw.push_back(gemm_step("mlp.up", tokens, h, (gated_ ? 2 : 1) * f, e));
  // SwiGLU reads gate and up and writes their product; GELU reads and writes one tensor.
  fw.push_back(elementwise_step("mlp.act", (gated_ ? 3 : 2) * tokens * f, 8 * tokens * f, e));
  fw.push_back(gemm_step("mlp.down", tokens, f, h, e));
  close_tp_region(fw, "mlp", shape.tp, shape.sequence_parallel, tokens * h * e);
}

BlockSteps TransformerModel::layer_steps(int, const RankShape& shape) const {
  BlockSteps block;
  attention_block(shape, &block);
  mlp_block(shape, &block);
  derive_backward(&block);
  return block;
}

BlockSteps TransformerModel::embedding_steps(const RankShape& shape) const {
  const double e = bytes_per_element(shape.dtype);
  const double tokens = tokens_of(shape);
  const double h = static_cast<double>(hidden_);
  BlockSteps block;
  // A vocabulary-parallel lookup: each TP rank writes the rows it owns, then the partial
  // results are summed over the TP group. Its backward scatters the gradient into the table:
  // a weight gradient, with no input gradient.
  LayerStep lookup = elementwise_step("embedding", tokens * h, 0, e);
  lookup.input_grad_factor = 0;
  lookup.weight_grad_factor = 1;
  block.forward.push_back(lookup);
  close_tp_region(block.forward, "embedding", shape.tp, shape.sequence_parallel, tokens * h * e);
  derive_backward(&block);
  return block;
}

BlockSteps TransformerModel::head_steps(const RankShape& shape) const {
  const double e = bytes_per_element(shape.dtype);
  const double tokens = tokens_of(shape);
  const double norm_tokens = norm_tokens_of(shape);
  const double h = static_cast<double>(hidden_);
  const double v = static_cast<double>(vocab_) / shape.tp;
  BlockSteps block;
  auto& fw = block.forward;
  fw.push_back(elementwise_step("final.norm", 2 * norm_tokens * h,
                                kNormFlopsPerElement * norm_tokens * h, e));
  open_tp_region(fw, "lm_head", shape.tp, shape.sequence_parallel, tokens * h * e);
  fw.push_back(gemm_step("lm_head", tokens, h, v, e));
  // Vocabulary-parallel cross-entropy in FP32: the logits are read and the softmax written
  // about three times; the backward reads the softmax once and writes the gradient.
  LayerStep loss = elementwise_step("loss", 3 * tokens * v * kFp32Bytes / e, 5 * tokens * v, e);
  loss.backward_bytes_factor = 0.5;
  fw.push_back(loss);
  if (shape.tp > 1) {
    // max, sum of exponentials and target logit: one FP32 value each per token
    fw.push_back(collective_step("loss.allreduce", CollectiveKind::kAllReduce, std::nullopt,
                                 CommDim::kTp, 3 * tokens * kFp32Bytes));
  }
  derive_backward(&block);
  return block;
}

}  // namespace racksim
