// The model ledger of a decoder-only transformer: parameters, FLOPs per token, and the steps
// of each block (FLOPs and HBM bytes per kernel, collectives) for one micro-batch on one rank.
//
// Conventions (they decide the MFU numerator, so the report repeats them):
// - N ("active parameters") counts the weights that take part in a matrix multiply for every
//   token: the attention projections, the MLP, and the output (LM head) projection. The input
//   embedding is a lookup and is not counted.
// - Model FLOPs per token = 6N + a*L, with L the sequence length and a the attention
//   coefficient 12 * layers * heads * head_dim (QK^T and AV, forward + backward = 3 x forward),
//   halved when causal halving is requested (the PaLM and Megatron papers do not halve).
// - Kernel FLOPs (what the simulated kernels execute) are causal: attention kernels skip the
//   masked half. Backward GEMMs cost 2x forward (input and weight gradients); backward
//   attention 2.5x forward (FlashAttention-2's five matmuls against two).
#pragma once

#include <cstdint>

#include "proto/scenario.pb.h"
#include "workloads/event_graph.h"
#include "workloads/layer_steps.h"

namespace racksim {

// How a micro-batch is cut for one rank.
struct RankShape {
  int64_t micro_batch = 1;
  int64_t seq_length = 1;  // tokens per sequence
  int tp = 1;
  bool sequence_parallel = false;
  DataType dtype = DataType::kBf16;
};

class TransformerModel {
 public:
  explicit TransformerModel(const config::Model& model);

  int64_t hidden() const { return hidden_; }
  int64_t layers() const { return layers_; }
  int64_t heads() const { return heads_; }
  int64_t kv_heads() const { return kv_heads_; }
  int64_t head_dim() const { return head_dim_; }
  int64_t ffn() const { return ffn_; }
  int64_t vocab() const { return vocab_; }
  bool gated_mlp() const { return gated_; }
  bool tied_embeddings() const { return tied_; }

  // Parameters of transformer layer `layer` (projections, MLP, norms).
  double layer_params(int layer) const;
  // Of those, the ones in a matrix multiply for every token.
  double layer_active_params(int layer) const;
  double embedding_params() const { return static_cast<double>(vocab_ * hidden_); }
  // All parameters (the embedding counted once when tied).
  double total_params() const;
  // N: parameters in a matrix multiply per token (layers + LM head).
  double active_params() const;
  // a in 6N + a*L.
  double attention_coeff(bool causal_halving) const;
  double model_flops_per_token(int64_t seq_length, bool causal_halving) const;
  // Forward FLOPs per token of the transformer layers alone (2 N_layers + a L / 3): what full
  // recompute runs again.
  double layer_forward_flops_per_token(int64_t seq_length, bool causal_halving) const;

  BlockSteps layer_steps(int layer, const RankShape& shape) const;
  BlockSteps embedding_steps(const RankShape& shape) const;
  BlockSteps head_steps(const RankShape& shape) const;

 private:
  void attention_block(const RankShape& shape, BlockSteps* block) const;
  void mlp_block(const RankShape& shape, BlockSteps* block) const;

  int64_t hidden_;
  int64_t layers_;
  int64_t heads_;
  int64_t kv_heads_;
  int64_t head_dim_;
  int64_t ffn_;
  int64_t vocab_;
  bool gated_;
  bool tied_;
};

}  // namespace racksim
