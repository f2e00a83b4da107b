// The attention block of one layer: its parameters, its FLOPs per token, the bytes of key/value
// state per token (what context parallelism circulates and inference caches), and its kernels.
//
// Kinds:
//   kFull             MHA / GQA / MQA (num_kv_heads), dense causal attention over all tokens
//   kLatent           MLA: keys and values from a kv_lora_rank latent plus a shared RoPE key
//   kSlidingWindow    attends to the last window_tokens only, over the shared MQA latent below
//   kWindowed         kFull's heads and projections over the last window_tokens only (gpt-oss's
//                     sliding layers)
//   kCompressed       HCA: dense causal attention over one latent entry per compressed_ratio tokens
//   kCompressedSparse CSA: entries per sparse_ratio tokens; an indexer (indexer_heads x
//                     indexer_head_dim) scores all of them, the attention reads the top-k + window
// The other hybrid kinds use MLA's projections (a query latent, one shared key/value latent:
// MQA).
//
// FLOP conventions (the MFU numerator, 6N + aL): a counts the L-proportional attention work,
// forward + backward = 3 x forward. Dense attention (kFull, kLatent, kCompressed) counts QK^T and
// AV over all L keys, halved when causal halving is asked for; the CSA indexer scores all
// L/sparse_ratio entries and is never halved (the seed report's convention). Window and top-k
// attention do not grow with L and are left out of a. The simulated kernels execute the causal
// half of every causal attention, the indexer included.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/scenario.pb.h"
#include "workloads/model/layer_steps.h"

namespace racksim {

enum class AttentionKind : uint8_t {
  kFull,
  kLatent,
  kSlidingWindow,
  kWindowed,
  kCompressed,
  kCompressedSparse
};

// Whether a kind's keys and values come from heads of its own (full or windowed GQA), which
// tensor parallelism splits, rather than from a latent every TP rank keeps whole (MLA, the other
// hybrid kinds).
inline bool own_kv_heads(AttentionKind kind) {
  return kind == AttentionKind::kFull || kind == AttentionKind::kWindowed;
}

// Whether a kind attends to the last window_tokens only.
inline bool windowed(AttentionKind kind) {
  return kind == AttentionKind::kSlidingWindow || kind == AttentionKind::kWindowed;
}

struct AttentionSpec {
  AttentionKind kind = AttentionKind::kFull;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;  // kFull, kWindowed
  int64_t head_dim = 0;  // query/key head dim (MLA: without the RoPE part)
  int64_t rope_dim = 0;  // MLA: shared RoPE key dims
  int64_t v_head_dim = 0;
  int64_t q_lora_rank = 0;  // 0: full query projection
  int64_t kv_lora_rank = 0;
  int64_t window = 0;  // kSlidingWindow, kWindowed, and CSA's local window
  int64_t ratio = 1;   // kCompressed / kCompressedSparse: tokens per compressed entry
  int64_t top_k = 0;   // CSA
  int64_t indexer_heads = 0;
  int64_t indexer_head_dim = 0;
  // model.position_encoding ROTARY: the queries and keys are rotated after their projections
  // (the whole heads where the kind has its own, else the rope_dim part).
  bool rotary = false;

  bool latent() const { return !own_kv_heads(kind); }
  int64_t qk_dim() const { return head_dim + rope_dim; }
};

// The query and key elements a rotary embedding rotates for `tokens` tokens on one of `tp`
// ranks: whole heads where the kind has its own, else each query head's rope_dim part and the
// one shared RoPE key (none without rotary embeddings).
struct RotatedElements {
  double query = 0;
  double key = 0;
};
RotatedElements rotated_elements(const AttentionSpec& spec, int tp, double tokens);

// Layer l's attention kind (hybrid pattern resolved) and spec.
std::vector<AttentionKind> attention_kinds(const config::Model& model);
AttentionSpec attention_spec(const config::Model& model, AttentionKind kind);
std::string_view to_string(AttentionKind kind);

// Whether Megatron's fused scale-mask-softmax kernel takes the scores of `attn_batch` (micro-batch
// x heads per rank) products over `seq` keys; otherwise PyTorch runs the softmax in FP32, op by
// op (see attention_ledger.cpp).
bool fused_softmax_takes(double attn_batch, double seq);

double attention_params(const AttentionSpec& spec);
// This layer's share of a in 6N + aL (FLOPs per token per unit of L, forward + backward).
double attention_coeff(const AttentionSpec& spec, bool causal_halving);
// Bytes of key/value state one token leaves for later tokens (the KV cache entry; compressed
// kinds: per original token, i.e. the entry divided by the ratio; the CSA indexer keys included).
double kv_bytes_per_token(const AttentionSpec& spec, double elem_bytes);

// What the block keeps for its backward (layer_steps.h's SavedActivations), per token: the
// projections' input (the norm's output); the queries, keys, values and the core's output, which
// a fused attention kernel saves (the stored scores of a materialized one are the memory
// ledger's); for MLA the latents and their norms' outputs, whole on every TP rank. A latent kind's
// queries (and MLA's keys and values) are up-projection outputs.
SavedActivations attention_saved_activations(const AttentionSpec& spec);
// The weights of the up-projections MLA_UP_PROJ recompute runs again (0 for GQA).
double up_projection_params(const AttentionSpec& spec);

// How one rank sees the sequence: its tokens, the keys they attend to, how it splits heads.
struct AttentionShape {
  int64_t micro_batch = 1;
  int64_t seq_length = 1;  // the whole sequence
  int tp = 1;
  int cp = 1;            // context-parallel ranks sharing the sequence
  bool ulysses = false;  // CP by all-to-all over heads instead of a KV ring
  bool sequence_parallel = false;
  DataType dtype = DataType::kBf16;
  int64_t indexer_chunk_tokens = 0;  // CSA: the indexer's recompute chunk (0: whole)
  // Dense attention as batched GEMMs over the full s x s scores and a softmax between them
  // (training.attention_impl MATERIALIZED) instead of one fused kernel.
  bool materialized = false;
  // training.rotary_impl ROTARY_COMPLEX_FP32: three eager kernels per rotated tensor, not one.
  bool rotary_complex_fp32 = false;
};

// Appends the attention block's forward steps (norm, projections, core attention with its CP
// exchange, output projection, TP collectives) and what selective recompute repeats.
void append_attention(const AttentionSpec& spec, const AttentionShape& shape, BlockSteps* block);

// The largest single allocation of the block's backward for one micro-batch: the CSA indexer's
// unreduced scores [b, s, heads, L/ratio] and their gradient in FP32, or one query chunk of them.
struct Workspace {
  std::string name;
  double bytes = 0;
};
Workspace attention_workspace(const AttentionSpec& spec, const AttentionShape& shape);

}  // namespace racksim
