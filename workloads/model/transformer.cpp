#include "workloads/model/transformer.h"

#include <cmath>
#include <stdexcept>

namespace racksim {

namespace {

// The sum of `per_layer` over the layers' specs.
template <class Spec, class PerLayer>
double sum_over(const std::vector<Spec>& specs, PerLayer per_layer) {
  double total = 0;
  for (const Spec& spec : specs) total += per_layer(spec);
  return total;
}

double local_tokens(const RankShape& shape) {
  return static_cast<double>(shape.micro_batch * shape.seq_length) / shape.cp;
}

// Outside the tensor-parallel regions, sequence parallelism splits the tokens over TP ranks.
double norm_tokens_of(const RankShape& shape) {
  return shape.sequence_parallel ? local_tokens(shape) / shape.tp : local_tokens(shape);
}

MlpShape mlp_shape(const RankShape& shape) {
  MlpShape m;
  m.tokens = static_cast<int64_t>(local_tokens(shape));
  m.tp = shape.tp;
  m.sequence_parallel = shape.sequence_parallel;
  m.ep = shape.ep;
  m.dtype = shape.dtype;
  m.dispatch_element_bytes = shape.moe_dispatch_element_bytes;
  m.expert_gemm_streams = shape.expert_gemm_streams;
  return m;
}

// Vocabulary-parallel cross-entropy over `logits` logits of `e` bytes each, appended to `fw` (the
// HBM traffic per logit is in training.cross_entropy's comment). Fused: one kernel reads the
// logits and writes the softmax about three times in FP32, its backward half of that. Unfused, as
// Megatron-LM's vocab_parallel_cross_entropy(logits.float()) runs: six kernels, each a pass over
// FP32 logits (cast, max, subtract, exp, sum, divide); its backward is two (the in-place multiply
// by the output's gradient, then the cast back), so the other four launch nothing.
void append_cross_entropy(const std::string& name, double logits, double e, bool unfused,
                          std::vector<LayerStep>& fw) {
  const ElementwiseKernel fused[] = {{"", 5, 3 * kFp32Bytes, 1.5 * kFp32Bytes}};
  const ElementwiseKernel fp32[] = {{".to_fp32", 0, e + kFp32Bytes, e + kFp32Bytes},
                                    {".max", 1, kFp32Bytes, 0},
                                    {".sub", 1, 2 * kFp32Bytes, 0},
                                    {".exp", 1, 2 * kFp32Bytes, 0},
                                    {".sum", 1, kFp32Bytes, 0},
                                    {"", 1, 2 * kFp32Bytes, 2 * kFp32Bytes}};
  append_elementwise_kernels(name,
                             unfused ? std::span<const ElementwiseKernel>(fp32)
                                     : std::span<const ElementwiseKernel>(fused),
                             logits, fw);
}

}  // namespace

AttentionShape attention_shape(const RankShape& shape) {
  AttentionShape a;
  a.micro_batch = shape.micro_batch;
  a.seq_length = shape.seq_length;
  a.tp = shape.tp;
  a.cp = shape.cp;
  a.ulysses = shape.ulysses;
  a.sequence_parallel = shape.sequence_parallel;
  a.dtype = shape.dtype;
  a.indexer_chunk_tokens = shape.indexer_chunk_tokens;
  a.materialized = shape.materialized_attention;
  a.rotary_complex_fp32 = shape.rotary_complex_fp32;
  return a;
}

TransformerModel::TransformerModel(const config::Model& model)
    : hidden_(model.hidden_size()),
      layers_(model.num_layers()),
      vocab_(model.vocab_size()),
      tied_(model.tie_embeddings()),
      learned_positions_(model.position_encoding() == config::Model::LEARNED_ABSOLUTE),
      embedding_dropout_(model.hidden_dropout() > 0),
      experts_(model.num_experts()),
      mtp_depth_(model.mtp_depth()) {
  if (hidden_ <= 0 || layers_ <= 0 || vocab_ <= 0 || model.num_heads() <= 0) {
    throw std::invalid_argument("transformer: every model dimension must be positive");
  }
  const auto kinds = attention_kinds(model);
  for (int l = 0; l < layers_; ++l) {
    attention_.push_back(attention_spec(model, kinds[l]));
    mlp_.push_back(mlp_spec(model, l));
    if (attention_.back().head_dim <= 0 || (!mlp_.back().moe && mlp_.back().ffn <= 0)) {
      throw std::invalid_argument("transformer: every model dimension must be positive");
    }
  }
}

double TransformerModel::layer_params(int layer) const {
  const double norms = 2.0 * static_cast<double>(hidden_);
  return attention_params(attention_[layer]) + mlp_params(mlp_[layer]) + norms;
}

double TransformerModel::layer_expert_params(int layer) const {
  return mlp_expert_params(mlp_[layer]);
}

double TransformerModel::layer_active_params(int layer) const {
  return attention_params(attention_[layer]) + mlp_active_params(mlp_[layer]);
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

double TransformerModel::mtp_params() const {
  if (mtp_depth_ == 0) return 0;
  const double h = static_cast<double>(hidden_);
  // Each module: a projection of [embedding, hidden state] to hidden, norms, and one layer like
  // the last; the embedding and the output head are shared with the model.
  return mtp_depth_ * (2 * h * h + 3 * h + layer_params(static_cast<int>(layers_) - 1));
}

double TransformerModel::up_projection_params() const {
  return sum_over(attention_,
                  [](const AttentionSpec& s) { return racksim::up_projection_params(s); });
}

double TransformerModel::dense_mlp_params() const {
  return sum_over(mlp_, [](const MlpSpec& s) { return s.moe ? 0 : mlp_params(s); });
}

double TransformerModel::moe_block_active_params() const {
  return sum_over(mlp_, [](const MlpSpec& s) { return s.moe ? mlp_active_params(s) : 0; });
}

double TransformerModel::shared_expert_params() const {
  return sum_over(mlp_, mlp_shared_expert_params);
}

double TransformerModel::alternate_matmul_params() const {
  double params = 0;
  for (int l = 0; l < layers_; ++l) {
    const AttentionSpec& a = attention_[static_cast<size_t>(l)];
    params += static_cast<double>(a.hidden) *
              static_cast<double>(a.kv_heads * a.head_dim + a.heads * a.v_head_dim +
                                  mlp_[static_cast<size_t>(l)].ffn);
  }
  return params;
}

double TransformerModel::attention_coeff(bool causal_halving) const {
  return sum_over(attention_, [&](const AttentionSpec& s) {
    return racksim::attention_coeff(s, causal_halving);
  });
}

double TransformerModel::model_flops_per_token(int64_t seq_length, bool causal_halving) const {
  return 6 * active_params() + attention_coeff(causal_halving) * static_cast<double>(seq_length);
}

double TransformerModel::layer_forward_flops_per_token(int layer, int64_t seq_length,
                                                       bool causal_halving) const {
  return 2 * layer_active_params(layer) +
         racksim::attention_coeff(attention_[static_cast<size_t>(layer)], causal_halving) *
             static_cast<double>(seq_length) / 3;
}

BlockSteps TransformerModel::layer_steps(int layer, const RankShape& shape) const {
  BlockSteps block;
  append_attention(attention_[layer], attention_shape(shape), &block);
  append_mlp(mlp_[layer], mlp_shape(shape), &block);
  derive_backward(&block);
  return block;
}

namespace {

// A table lookup over `elements` (tokens x hidden) from a table of `table_elements`: it writes
// each token's row. Its backward, PyTorch's dense embedding backward, zeroes the whole table's
// gradient, then sums each token's gradient into its row (reads the gradient and writes the rows);
// behind Megatron's transpose its gradient arrives strided and is first copied whole. No input
// gradient; the table's gradient accumulates as a weight gradient (training/rank_writer.h).
LayerStep table_lookup(const std::string& name, double elements, double table_elements,
                       bool strided_gradient, double e) {
  LayerStep lookup = elementwise_step(name, elements, 0, e);
  lookup.input_grad_factor = 0;
  lookup.weight_grad_factor = 1;
  lookup.weight_elements = table_elements;
  const double backward = table_elements + (strided_gradient ? 4 : 2) * elements;
  lookup.backward_bytes_factor = backward / elements;
  return lookup;
}

}  // namespace

// As Megatron's LanguageModelEmbedding runs it: the vocabulary-parallel word lookup, summed over
// the TP group; the learned position table's lookup and add; the copy to sequence-first; under
// sequence parallelism the rank's share of the tokens; the embedding dropout. Without a position
// table, sequence parallelism reduce-scatters the word lookup straight away (Megatron-Core's
// reduce_scatter_embeddings); with one, the lookup is all-reduced, and the scatter after the add
// is a split whose output Megatron clones.
BlockSteps TransformerModel::embedding_steps(const RankShape& shape) const {
  const double e = bytes_per_element(shape.dtype);
  const double h = static_cast<double>(hidden_);
  const double elements = local_tokens(shape) * h;
  const bool strided = shape.embedding_transpose;
  const bool split_after_add = learned_positions_ && shape.sequence_parallel && shape.tp > 1;
  BlockSteps block;
  std::vector<LayerStep>& fw = block.forward;
  // Each TP rank writes the rows it owns; the partial results are summed over the TP group.
  const double rows = std::floor(static_cast<double>(vocab_) / shape.tp);
  fw.push_back(table_lookup("embedding", elements, rows * h, strided, e));
  // Kernels without a backward of their own: a copy's gradient stays a strided view (copied by
  // the lookups), a clone's and an add's pass through unchanged.
  const ElementwiseKernel copy[] = {{"", 0, 2 * e, 0}};
  const auto transpose = [&] {
    if (strided) append_elementwise_kernels("embedding.transpose", copy, elements, fw);
  };
  if (!learned_positions_ && shape.sequence_parallel) transpose();
  close_tp_region(fw, "embedding", shape.tp, shape.sequence_parallel && !split_after_add,
                  elements * e);
  if (learned_positions_) {
    const double table = static_cast<double>(shape.seq_length) * h;
    fw.push_back(table_lookup("embedding.position", elements, table, strided, e));
    const ElementwiseKernel add[] = {{"", 1, 3 * e, 0}};
    append_elementwise_kernels("embedding.position_add", add, elements, fw);
  }
  if (learned_positions_ || !shape.sequence_parallel) transpose();
  const double local = shape.sequence_parallel ? elements / shape.tp : elements;
  if (split_after_add) {
    fw.push_back(collective_step("embedding.scatter", std::nullopt, CollectiveKind::kAllGather,
                                 CommDim::kTp, elements * e));
    append_elementwise_kernels("embedding.scatter_clone", copy, local, fw);
  }
  if (embedding_dropout_) {
    // Reads the embeddings, writes the dropped ones and a one-byte mask; the backward reads the
    // gradient and the mask and writes the gradient.
    const ElementwiseKernel dropout[] = {{"", 2, 2 * e + 1, 2 * e + 1}};
    append_elementwise_kernels("embedding.dropout", dropout, local, fw);
  }
  derive_backward(&block);
  return block;
}

namespace {

// One output head: the final norm, the vocabulary-parallel GEMM and the loss, appended to `fw`.
void append_output_head(const std::string& name, const RankShape& shape, double h, double vocab,
                        std::vector<LayerStep>& fw) {
  const double e = bytes_per_element(shape.dtype);
  const double tokens = local_tokens(shape);
  const std::size_t first = fw.size();
  fw.push_back(norm_step(name + ".norm", norm_tokens_of(shape) * h, e));
  open_tp_region(fw, name, shape.tp, shape.sequence_parallel, tokens * h * e);
  // Each rank's slice of the output layer: vocab_size / tp rows, rounded down where tp does not
  // divide it (vTrain's model splits GPT-2's 50,257 so; Megatron pads the vocabulary first).
  const double v = std::floor(vocab / shape.tp);
  LayerStep head = gemm_step(name, tokens, h, v, e);
  head.fp8_linear = false;  // Megatron-Core's output layer is not a Transformer Engine module
  fw.push_back(head);
  append_cross_entropy(name + ".loss", tokens * v, e, shape.unfused_cross_entropy, fw);
  if (shape.tp > 1) {
    // max, sum of exponentials and target logit: one FP32 value each per token
    fw.push_back(collective_step(name + ".loss.allreduce", CollectiveKind::kAllReduce, std::nullopt,
                                 CommDim::kTp, 3 * tokens * kFp32Bytes));
  }
  for (std::size_t i = first; i < fw.size(); ++i) fw[i].output_layer = true;
}

}  // namespace

void TransformerModel::append_mtp_module(const RankShape& shape, std::vector<LayerStep>& fw) const {
  const double h = static_cast<double>(hidden_);
  fw.push_back(
      gemm_step("mtp.proj", local_tokens(shape), 2 * h, h, bytes_per_element(shape.dtype)));
  BlockSteps extra;
  append_attention(attention_.back(), attention_shape(shape), &extra);
  append_mlp(mlp_.back(), mlp_shape(shape), &extra);
  for (LayerStep& step : extra.forward) step.name = "mtp." + step.name;
  fw.insert(fw.end(), extra.forward.begin(), extra.forward.end());
}

BlockSteps TransformerModel::head_steps(const RankShape& shape, MtpPlacement mtp) const {
  const double h = static_cast<double>(hidden_);
  const double vocab = static_cast<double>(vocab_);
  BlockSteps block;
  append_output_head("lm_head", shape, h, vocab, block.forward);
  // Multi-token prediction: each module projects [embedding of the next token, hidden state]
  // to hidden, runs one more layer like the last one, and shares the output head.
  for (int d = 0; d < mtp_depth_; ++d) {
    if (mtp == MtpPlacement::kWithHead) append_mtp_module(shape, block.forward);
    append_output_head("mtp.head", shape, h, vocab, block.forward);
  }
  derive_backward(&block);
  return block;
}

BlockSteps TransformerModel::mtp_steps(const RankShape& shape) const {
  BlockSteps block;
  for (int d = 0; d < mtp_depth_; ++d) append_mtp_module(shape, block.forward);
  derive_backward(&block);
  return block;
}

}  // namespace racksim
