// The model ledger of a decoder-only transformer: parameters, FLOPs per token, and the steps
// of each block (FLOPs and HBM bytes per kernel, collectives) for one micro-batch on one rank.
// A layer is an attention block (attention_ledger.h: GQA, MLA, or the hybrid sliding-window /
// compressed / compressed-sparse kinds) and a feed-forward block (mlp_ledger.h: dense or MoE).
//
// Conventions (they decide the MFU numerator, so the report repeats them):
// - N ("active parameters") counts the weights that take part in a matrix multiply for every
//   token: the attention projections, the dense MLP or the router plus the experts a token
//   runs (top-k routed and the shared ones), and the output (LM head) projection. The input
//   embedding is a lookup and is not counted; neither are multi-token-prediction modules.
// - Model FLOPs per token = 6N + a*L, with L the sequence length and a the sum of the layers'
//   attention coefficients (attention_ledger.h; for dense attention 12 * heads * head_dim per
//   layer, halved with causal halving, which the PaLM and Megatron papers do not apply).
// - Kernel FLOPs (what the simulated kernels execute) are causal: attention kernels skip the
//   masked half. Backward GEMMs cost 2x forward (input and weight gradients); backward
//   attention 2.5x forward (FlashAttention-2's five matmuls against two).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/event_graph.h"
#include "proto/scenario.pb.h"
#include "workloads/model/attention_ledger.h"
#include "workloads/model/layer_steps.h"
#include "workloads/model/mlp_ledger.h"

namespace racksim {

// How a micro-batch is cut for one rank.
struct RankShape {
  int64_t micro_batch = 1;
  int64_t seq_length = 1;  // tokens per sequence
  int tp = 1;
  bool sequence_parallel = false;
  DataType dtype = DataType::kBf16;
  int cp = 1;
  bool ulysses = false;
  int ep = 1;
  int64_t indexer_chunk_tokens = 0;
  bool materialized_attention = false;  // training.attention_impl MATERIALIZED
  bool unfused_cross_entropy = false;   // training.cross_entropy FP32_UNFUSED
  bool rotary_complex_fp32 = false;     // training.rotary_impl ROTARY_COMPLEX_FP32
  bool embedding_transpose = false;     // training.embedding_transpose
  // Bytes per element of the MoE all-to-alls towards the experts (training.moe_dispatch_dtype);
  // 0: the activation dtype's.
  double moe_dispatch_element_bytes = 0;
  int expert_gemm_streams = 0;  // MlpShape::expert_gemm_streams
};

class TransformerModel {
 public:
  explicit TransformerModel(const config::Model& model);

  int64_t hidden() const { return hidden_; }
  int64_t layers() const { return layers_; }
  int64_t vocab() const { return vocab_; }
  bool tied_embeddings() const { return tied_; }
  bool learned_positions() const { return learned_positions_; }
  bool moe() const { return experts_ > 0; }
  int mtp_depth() const { return mtp_depth_; }
  const AttentionSpec& attention(int layer) const { return attention_[layer]; }
  const MlpSpec& mlp(int layer) const { return mlp_[layer]; }

  // Parameters of transformer layer `layer` (attention, feed-forward, norms).
  double layer_params(int layer) const;
  // Of those, the routed experts' (sharded over expert parallelism, not tensor parallelism).
  double layer_expert_params(int layer) const;
  // Of those, the ones in a matrix multiply for every token.
  double layer_active_params(int layer) const;
  double embedding_params() const { return static_cast<double>(vocab_ * hidden_); }
  // All parameters (the embedding counted once when tied; multi-token prediction excluded).
  double total_params() const;
  // N: parameters in a matrix multiply per token (layers + LM head).
  double active_params() const;
  // a in 6N + a*L.
  double attention_coeff(bool causal_halving) const;
  double model_flops_per_token(int64_t seq_length, bool causal_halving) const;
  // Forward FLOPs per token of transformer layer `layer` (2 N_layer + a_layer L / 3): what full
  // recompute runs again where it takes the layer.
  double layer_forward_flops_per_token(int layer, int64_t seq_length, bool causal_halving) const;
  // Weights of the layers' latent-attention up-projections: 2 FLOPs each per token is what
  // recompute of MLA_UP_PROJ runs again.
  double up_projection_params() const;
  // Weights in a matrix multiply per token of the layers' dense MLPs, of their MoE blocks
  // (router, a token's routed experts, the shared ones) and of their shared experts alone: what
  // recompute of MLP, MOE and SHARED_EXPERTS runs again, 2 FLOPs each per token.
  double dense_mlp_params() const;
  double moe_block_active_params() const;
  double shared_expert_params() const;
  // Weights of the matrix multiplies torchtitan's op-level policy (ALTERNATE_MATMULS) runs again:
  // each layer's key, output and up (GELU: second) projections, 2 FLOPs each per token.
  double alternate_matmul_params() const;
  // Parameters of the multi-token-prediction modules (on the last stage, not in N).
  double mtp_params() const;

  BlockSteps layer_steps(int layer, const RankShape& shape) const;
  // The first stage's embedding: the word lookup, the position table where the model learns one,
  // Megatron's copy to sequence-first (RankShape::embedding_transpose), the embedding dropout,
  // and the TP collectives between them.
  BlockSteps embedding_steps(const RankShape& shape) const;
  // Where the multi-token-prediction modules run: beside the output layer, or in a chunk of their
  // own before it (Megatron-Core's "...m|L"), which sends their hidden states on to it.
  enum class MtpPlacement { kWithHead, kStandalone };
  // The final norm, output head and loss; with kWithHead then each MTP module and its head, with
  // kStandalone one head and loss per MTP module (their modules are mtp_steps).
  BlockSteps head_steps(const RankShape& shape, MtpPlacement mtp = MtpPlacement::kWithHead) const;
  // The MTP modules alone: per module the projection of [embedding, hidden] and one layer like
  // the last.
  BlockSteps mtp_steps(const RankShape& shape) const;

 private:
  // One MTP module's steps (projection and layer), appended to `forward`.
  void append_mtp_module(const RankShape& shape, std::vector<LayerStep>& forward) const;

  int64_t hidden_;
  int64_t layers_;
  int64_t vocab_;
  bool tied_;
  bool learned_positions_;  // model.position_encoding LEARNED_ABSOLUTE
  bool embedding_dropout_;  // model.hidden_dropout > 0
  int64_t experts_;
  int mtp_depth_;
  std::vector<AttentionSpec> attention_;
  std::vector<MlpSpec> mlp_;
};

// The attention shape of a rank from its RankShape.
AttentionShape attention_shape(const RankShape& shape);

}  // namespace racksim
