#include "workloads/model/attention_ledger.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace racksim {

namespace {

std::vector<AttentionKind> default_hybrid_pattern(const config::HybridAttention& h) {
  std::vector<AttentionKind> kinds(h.sliding_window_layers(), AttentionKind::kSlidingWindow);
  int64_t sparse = h.compressed_sparse_layers();
  int64_t dense = h.compressed_layers();
  bool next_sparse = true;
  while (sparse > 0 || dense > 0) {
    if ((next_sparse && sparse > 0) || dense == 0) {
      kinds.push_back(AttentionKind::kCompressedSparse);
      --sparse;
    } else {
      kinds.push_back(AttentionKind::kCompressed);
      --dense;
    }
    next_sparse = !next_sparse;
  }
  return kinds;
}

// Keys of a kind's core attention per query, averaged over a causal sequence of `seq` tokens
// (the kernel skips the masked half).
double causal_keys(const AttentionSpec& spec, double seq) {
  switch (spec.kind) {
    case AttentionKind::kFull:
    case AttentionKind::kLatent:
      return seq / 2;
    case AttentionKind::kSlidingWindow:
    case AttentionKind::kWindowed:
      return std::min<double>(spec.window, seq);
    case AttentionKind::kCompressed:
      return seq / spec.ratio / 2;
    case AttentionKind::kCompressedSparse:
      return std::min<double>(spec.top_k + spec.window, seq);
  }
  return seq;
}

// Width of the shared key/value state each token contributes (elements).
double kv_width(const AttentionSpec& spec, int tp) {
  switch (spec.kind) {
    case AttentionKind::kFull:
    case AttentionKind::kWindowed:
      return static_cast<double>(spec.kv_heads * (spec.head_dim + spec.v_head_dim)) / tp;
    case AttentionKind::kLatent:
      return static_cast<double>(spec.kv_lora_rank + spec.rope_dim);
    default:
      return static_cast<double>(spec.head_dim);  // one MQA latent for keys and values
  }
}

}  // namespace

std::string_view to_string(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::kFull:
      return "full";
    case AttentionKind::kLatent:
      return "mla";
    case AttentionKind::kSlidingWindow:
      return "sliding_window";
    case AttentionKind::kWindowed:
      return "windowed";
    case AttentionKind::kCompressed:
      return "compressed";
    case AttentionKind::kCompressedSparse:
      return "compressed_sparse";
  }
  return "?";
}

std::vector<AttentionKind> attention_kinds(const config::Model& model) {
  const auto& h = model.hybrid();
  const int64_t layers = model.num_layers();
  const bool hybrid =
      h.sliding_window_layers() + h.compressed_layers() + h.compressed_sparse_layers() > 0 ||
      !h.layer_pattern().empty();
  // A full-attention layer: MLA where the model has a key/value latent.
  const AttentionKind full =
      model.kv_lora_rank() > 0 ? AttentionKind::kLatent : AttentionKind::kFull;
  if (!hybrid) return std::vector<AttentionKind>(layers, full);
  std::vector<AttentionKind> kinds;
  if (!h.layer_pattern().empty()) {
    for (char c : h.layer_pattern()) {
      switch (c) {
        case 'F':
          kinds.push_back(full);
          break;
        case 'W':
          kinds.push_back(AttentionKind::kWindowed);
          break;
        case 'S':
          kinds.push_back(AttentionKind::kSlidingWindow);
          break;
        case 'H':
          kinds.push_back(AttentionKind::kCompressed);
          break;
        case 'C':
          kinds.push_back(AttentionKind::kCompressedSparse);
          break;
        default:
          throw std::invalid_argument(
              fmt::format("hybrid layer_pattern: '{}' is not F, W, S, H or C", c));
      }
    }
  } else {
    kinds = default_hybrid_pattern(h);
  }
  if (static_cast<int64_t>(kinds.size()) != layers) {
    throw std::invalid_argument(fmt::format(
        "hybrid attention describes {} layers but the model has {}", kinds.size(), layers));
  }
  return kinds;
}

RotatedElements rotated_elements(const AttentionSpec& spec, int tp, double tokens) {
  if (!spec.rotary) return {};
  const double heads = static_cast<double>(spec.heads) / tp;
  const bool own = own_kv_heads(spec.kind);
  const double rotated_dim = static_cast<double>(own ? spec.head_dim : spec.rope_dim);
  const double key_width =
      own ? static_cast<double>(spec.kv_heads) * rotated_dim / tp : rotated_dim;
  return {tokens * heads * rotated_dim, tokens * key_width};
}

AttentionSpec attention_spec(const config::Model& model, AttentionKind kind) {
  AttentionSpec s;
  s.kind = kind;
  s.hidden = model.hidden_size();
  s.heads = model.num_heads();
  s.kv_heads = model.has_num_kv_heads() ? model.num_kv_heads() : model.num_heads();
  s.head_dim =
      model.has_head_dim() ? model.head_dim() : (s.heads > 0 ? model.hidden_size() / s.heads : 0);
  s.v_head_dim = model.has_v_head_dim() ? model.v_head_dim() : s.head_dim;
  s.rope_dim = model.qk_rope_head_dim();
  s.rotary = model.position_encoding() == config::Model::ROTARY;
  s.q_lora_rank = model.q_lora_rank();
  s.kv_lora_rank = model.kv_lora_rank();
  const auto& h = model.hybrid();
  s.window = h.window_tokens();
  s.top_k = h.sparse_top_k();
  s.indexer_heads = h.indexer_heads();
  s.indexer_head_dim = h.indexer_head_dim();
  if (kind == AttentionKind::kCompressed) s.ratio = std::max<int64_t>(1, h.compressed_ratio());
  if (kind == AttentionKind::kCompressedSparse) s.ratio = std::max<int64_t>(1, h.sparse_ratio());
  return s;
}

double attention_params(const AttentionSpec& s) {
  const double h = static_cast<double>(s.hidden);
  const double q_width = static_cast<double>(s.heads * s.qk_dim());
  const double out = static_cast<double>(s.heads * s.v_head_dim) * h;
  if (own_kv_heads(s.kind)) {
    return h * static_cast<double>((s.heads + s.kv_heads) * s.head_dim +
                                   s.kv_heads * s.v_head_dim) +
           out;
  }
  const double q = s.q_lora_rank > 0
                       ? h * s.q_lora_rank + static_cast<double>(s.q_lora_rank) * q_width
                       : h * q_width;
  double kv = 0;
  if (s.kind == AttentionKind::kLatent) {
    kv = h * static_cast<double>(s.kv_lora_rank + s.rope_dim) +
         static_cast<double>(s.kv_lora_rank * s.heads * (s.head_dim + s.v_head_dim));
  } else {
    kv = h * static_cast<double>(s.head_dim);  // the shared key/value latent
  }
  double indexer = 0;
  if (s.kind == AttentionKind::kCompressedSparse) {
    const double q_in = s.q_lora_rank > 0 ? static_cast<double>(s.q_lora_rank) : h;
    indexer = q_in * static_cast<double>(s.indexer_heads * s.indexer_head_dim) +
              h * static_cast<double>(s.indexer_head_dim) +
              h * static_cast<double>(s.indexer_heads);
  }
  return q + kv + indexer + out;
}

double attention_coeff(const AttentionSpec& s, bool causal_halving) {
  const double halving = causal_halving ? 0.5 : 1.0;
  // QK^T and AV per key per token, forward.
  const double per_key = 2.0 * static_cast<double>(s.heads * (s.qk_dim() + s.v_head_dim));
  switch (s.kind) {
    case AttentionKind::kFull:
    case AttentionKind::kLatent:
      return 3 * per_key * halving;
    case AttentionKind::kCompressed:
      return 3 * per_key / s.ratio * halving;
    case AttentionKind::kCompressedSparse:
      return 3 * 2.0 * static_cast<double>(s.indexer_heads * s.indexer_head_dim) / s.ratio;
    case AttentionKind::kSlidingWindow:
    case AttentionKind::kWindowed:
      return 0;
  }
  return 0;
}

double kv_bytes_per_token(const AttentionSpec& s, double elem_bytes) {
  double width = kv_width(s, 1);
  if (s.kind == AttentionKind::kCompressedSparse) width += static_cast<double>(s.indexer_head_dim);
  return width * elem_bytes / static_cast<double>(s.ratio);
}

SavedActivations attention_saved_activations(const AttentionSpec& s) {
  const double heads = static_cast<double>(s.heads);
  const double queries = heads * static_cast<double>(s.qk_dim());
  const double output = heads * static_cast<double>(s.v_head_dim);
  SavedActivations saved;
  saved.stream = static_cast<double>(s.hidden);
  saved.linear_stream = saved.stream;  // the projections' input
  saved.heads = queries + output;      // the core's output is the output projection's input too
  saved.fp8_copies = output;
  if (own_kv_heads(s.kind)) {
    saved.heads += static_cast<double>(s.kv_heads * (s.head_dim + s.v_head_dim));
    return saved;
  }
  // A query latent: the down-projection's output (its norm's input) and the norm's output (the
  // up-projection's input).
  if (s.q_lora_rank > 0) {
    saved.latent += 2 * static_cast<double>(s.q_lora_rank);
    saved.linear_latent += static_cast<double>(s.q_lora_rank);
  }
  saved.up_projection = queries;
  if (s.kind == AttentionKind::kLatent) {
    // The key/value latent with the shared RoPE key and the latent's norm output; the keys and
    // values the up-projection expands per head.
    saved.latent += static_cast<double>(2 * s.kv_lora_rank + s.rope_dim);
    saved.linear_latent += static_cast<double>(s.kv_lora_rank);
    const double keys_and_values = heads * static_cast<double>(s.qk_dim() + s.v_head_dim);
    saved.heads += keys_and_values;
    saved.up_projection += keys_and_values;
  } else {
    // The one latent that serves as keys and values, and the compressed kinds' entries of it.
    const bool compressed =
        s.kind == AttentionKind::kCompressed || s.kind == AttentionKind::kCompressedSparse;
    saved.latent += static_cast<double>(s.head_dim) *
                    (1 + (compressed ? 1.0 / static_cast<double>(s.ratio) : 0.0));
  }
  if (s.kind == AttentionKind::kCompressedSparse) {
    // The indexer's queries and head weights (split by heads) and its keys.
    saved.heads += static_cast<double>(s.indexer_heads * (s.indexer_head_dim + 1));
    saved.latent += static_cast<double>(s.indexer_head_dim);
  }
  return saved;
}

double up_projection_params(const AttentionSpec& s) {
  if (own_kv_heads(s.kind)) return 0;
  const double heads = static_cast<double>(s.heads);
  const double q_in =
      s.q_lora_rank > 0 ? static_cast<double>(s.q_lora_rank) : static_cast<double>(s.hidden);
  double params = q_in * heads * static_cast<double>(s.qk_dim());
  if (s.kind == AttentionKind::kLatent) {
    params += static_cast<double>(s.kv_lora_rank) * heads *
              static_cast<double>(s.head_dim + s.v_head_dim);
  }
  return params;
}

namespace {

// The softmax of the scores and the dropout after it, HBM bytes per score element. Fused: one
// kernel reads the 16-bit scores and writes the probabilities (2 + 2), its backward reads the
// gradient and the probabilities and writes one gradient (2 + 2 + 2). Unfused (the fallback):
// cast to FP32 (2 + 4), scale (4 + 4), mask in place (4 + 4), softmax (4 + 4), cast back (4 + 2):
// 36 bytes forward; backward, each in reverse (6, 8, 8, softmax's 4 + 4 + 4, 6): 40. Both: the
// dropout reads the probabilities and writes the dropped ones and a 1-byte mask (2 + 2 + 1), its
// backward reads the gradient and the mask and writes one (2 + 1 + 2).
void append_scores_softmax(double scores, bool fused, std::vector<LayerStep>& core) {
  constexpr double kDropoutBytes = 5;
  static constexpr ElementwiseKernel kFused[] = {{"", 6, 4 + kDropoutBytes, 6 + kDropoutBytes}};
  static constexpr ElementwiseKernel kUnfused[] = {{".to_fp32", 2, 6, 6},
                                                   {".scale", 2, 8, 8},
                                                   {".mask", 2, 8, 8},
                                                   {"", 2, 8 + kDropoutBytes, 12 + kDropoutBytes},
                                                   {".to_fp16", 2, 6, 6}};
  append_elementwise_kernels("attn.softmax",
                             fused ? std::span<const ElementwiseKernel>(kFused)
                                   : std::span<const ElementwiseKernel>(kUnfused),
                             scores, core);
}

// Attention before FlashAttention (Megatron-LM's CoreAttention): per sequence and head, a batched
// GEMM writes the scores Q K^T over all s x s entries (the causal half is computed, then
// masked), the scale-mask-softmax and a dropout (append_scores_softmax) turn them into
// probabilities, and a second batched GEMM reads those with V.
void append_materialized_core(const AttentionSpec& spec, const AttentionShape& shape, double tokens,
                              std::vector<LayerStep>& core) {
  if (shape.cp > 1) {
    throw std::invalid_argument(
        "training.attention_impl MATERIALIZED needs layout.cp = 1 (context parallelism runs "
        "fused ring attention)");
  }
  const double e = bytes_per_element(shape.dtype);
  const double seq = static_cast<double>(shape.seq_length);
  const double keys = seq;
  const double batch = tokens / seq * static_cast<double>(spec.heads) / shape.tp;
  core.push_back(
      batched_gemm_step("attn.scores", batch, seq, static_cast<double>(spec.qk_dim()), keys, e));
  append_scores_softmax(batch * seq * keys, fused_softmax_takes(batch, seq), core);
  core.push_back(
      batched_gemm_step("attn.context", batch, seq, keys, static_cast<double>(spec.v_head_dim), e));
}

// The compressed-sparse indexer: it scores every compressed entry before a token (causal half),
// then picks the top-k.
void append_indexer(const AttentionSpec& spec, const AttentionShape& shape, double tokens,
                    std::vector<LayerStep>& core) {
  const double e = bytes_per_element(shape.dtype);
  const double entries = static_cast<double>(shape.seq_length) / spec.ratio;
  const double idx_heads = static_cast<double>(spec.indexer_heads) / shape.tp;
  const double idx_dim = static_cast<double>(spec.indexer_head_dim);
  LayerStep scores =
      attention_step("attn.indexer", 2 * tokens * (entries / 2) * idx_heads * idx_dim,
                     e * (tokens * idx_heads * idx_dim + entries * idx_dim + tokens * entries / 2));
  // Chunked indexer recompute: the backward computes the scores again, chunk by chunk.
  if (shape.indexer_chunk_tokens > 0) scores.input_grad_factor += 1;
  core.push_back(scores);
  core.push_back(
      elementwise_step("attn.indexer.topk", tokens * entries / 2, tokens * entries / 2, e));
}

// What ring attention does besides its attention kernels, per rank, as Transformer Engine's
// AttnFuncWithCPAndKVP2P runs it (NVIDIA/TransformerEngine, pytorch/attention/
// dot_product_attention/context_parallel.py, Apache-2.0):
// - pack: the forward packs k and v into the one buffer that travels (torch.cat: read and write
//   the block); the backward copies it into the first of its send buffers;
// - merge: each step's partial output is merged into the running one by the log-sum-exp rule
//   (the first copied, read and written once; each later step reads its output and reads and
//   writes the sum, with two FP32 LSE per head read; the LSE itself cloned, then read twice and
//   written per step); the backward sums each step's dq and dk/dv the same way, in the
//   activation dtype (copy the first, read both and write for each later one).
// With causal load balancing (each rank holds chunks r and 2 cp - 1 - r), a step after the
// first touches the whole local block on half of the ranks and half of it on the others: 3/4 of
// the block on average.
// Returns the pack kernel and the merge kernel.
std::vector<LayerStep> ring_pack_and_merge(const AttentionSpec& spec, const AttentionShape& shape,
                                           double tokens, double hops, double block_entries) {
  const double e = bytes_per_element(shape.dtype);
  const double heads = static_cast<double>(spec.heads) / shape.tp;
  const double out = heads * static_cast<double>(spec.v_head_dim);  // per token
  const double dq = heads * static_cast<double>(spec.qk_dim());
  const double kv = kv_width(spec, shape.tp) * block_entries / tokens;  // per local token
  const double later = 0.75 * hops;  // blocks merged after the first, in whole local blocks
  const double lse = heads * kFp32Bytes;
  const double pack_bytes = 2 * kv * e;
  const double merge_forward =
      (2 * out * e + 2 * lse) + later * (3 * out * e + 2 * lse) + (2 * lse + later * 3 * lse);
  const double merge_backward =
      (2 * dq * e + later * 3 * dq * e) + (2 * kv * e + later * 3 * kv * e);
  const ElementwiseKernel kernels[] = {
      {".pack", 0, pack_bytes, pack_bytes},
      {".merge", 3 * (1 + later) * out, merge_forward, merge_backward}};
  std::vector<LayerStep> steps;
  append_elementwise_kernels("attn.cp", kernels, tokens, steps);
  return steps;
}

// Ring attention: the rank's block of key/value state visits every other CP rank while the core
// works on the blocks it has; a sliding window only needs the previous rank's tail. The first
// attention kernel carries the exchange; the rest use what arrived.
void mark_ring_exchange(const AttentionSpec& spec, const AttentionShape& shape, double tokens,
                        std::vector<LayerStep>& core) {
  const double e = bytes_per_element(shape.dtype);
  const bool window_only = windowed(spec.kind);
  const double block_entries = window_only ? static_cast<double>(spec.window) : tokens / spec.ratio;
  double hop_bytes = block_entries * kv_width(spec, shape.tp) * e;
  if (spec.kind == AttentionKind::kCompressedSparse) {
    hop_bytes += block_entries * static_cast<double>(spec.indexer_head_dim) * e;  // indexer keys
  }
  const auto ring = std::find_if(core.begin(), core.end(), [](const LayerStep& step) {
    return step.op_class == OpClass::kAttention;
  });
  if (ring == core.end()) return;
  // The pack and merge kernels are Transformer Engine's, whose ring runs dense attention (full
  // or latent). For the compressed and windowed kinds the exchange is modelled alone: how their
  // frameworks merge partial outputs is not published.
  const bool dense = spec.kind == AttentionKind::kFull || spec.kind == AttentionKind::kLatent;
  ring->kind = LayerStep::Kind::kRing;
  ring->ring_hops = window_only ? 1 : shape.cp - 1;
  ring->dim = CommDim::kCp;
  ring->bytes = hop_bytes;
  if (!dense) return;
  const std::vector<LayerStep> pack_and_merge =
      ring_pack_and_merge(spec, shape, tokens, ring->ring_hops, block_entries);
  const auto at = core.insert(ring + 1, pack_and_merge[1]);  // the merge follows the ring
  core.insert(at - 1, pack_and_merge[0]);                    // the pack precedes it
}

// The context-parallel exchange around the core attention, and the core itself.
void append_core(const AttentionSpec& spec, const AttentionShape& shape, double tokens,
                 std::vector<LayerStep>& fw, std::vector<LayerStep>& recompute) {
  const double e = bytes_per_element(shape.dtype);
  const double seq = static_cast<double>(shape.seq_length);
  const double heads = static_cast<double>(spec.heads) / shape.tp;
  const double keys = causal_keys(spec, seq);
  const double key_entries = windowed(spec.kind) ? keys : seq / spec.ratio;
  const double width = kv_width(spec, shape.tp);
  const double flops =
      2 * tokens * keys * heads * static_cast<double>(spec.qk_dim() + spec.v_head_dim);
  const double hbm =
      e * (tokens * heads * static_cast<double>(spec.qk_dim() + 2 * spec.v_head_dim) +
           key_entries * width);
  std::vector<LayerStep> core;
  if (spec.kind == AttentionKind::kCompressedSparse) append_indexer(spec, shape, tokens, core);
  if (spec.kind == AttentionKind::kCompressed || spec.kind == AttentionKind::kCompressedSparse) {
    // Compress ratio tokens into one latent entry.
    core.push_back(elementwise_step("attn.compress", 2 * tokens * width, 2 * tokens * width, e));
  }
  if (shape.materialized &&
      (spec.kind == AttentionKind::kFull || spec.kind == AttentionKind::kLatent)) {
    append_materialized_core(spec, shape, tokens, core);
  } else {
    core.push_back(attention_step("attn.core", flops, hbm));
  }

  if (shape.cp > 1 && !shape.ulysses) mark_ring_exchange(spec, shape, tokens, core);
  const bool ulysses = shape.cp > 1 && shape.ulysses;
  if (ulysses) {
    // Ulysses: trade the sequence split for a head split and back.
    const double qkv = tokens * e * (heads * static_cast<double>(spec.qk_dim()) + width);
    fw.push_back(collective_step("attn.ulysses.in", CollectiveKind::kAllToAll,
                                 CollectiveKind::kAllToAll, CommDim::kCp, qkv));
  }
  fw.insert(fw.end(), core.begin(), core.end());
  recompute.insert(recompute.end(), core.begin(), core.end());
  if (ulysses) {
    fw.push_back(collective_step("attn.ulysses.out", CollectiveKind::kAllToAll,
                                 CollectiveKind::kAllToAll, CommDim::kCp,
                                 tokens * heads * static_cast<double>(spec.v_head_dim) * e));
  }
}

// The projections; a latent kind's up-projections also go to `up_recompute` (MLA_UP_PROJ).
void append_projections(const AttentionSpec& spec, double tokens, int tp, double e,
                        std::vector<LayerStep>& fw, std::vector<LayerStep>& up_recompute) {
  const double h = static_cast<double>(spec.hidden);
  const double heads = static_cast<double>(spec.heads) / tp;
  if (own_kv_heads(spec.kind)) {
    const double width = static_cast<double>((spec.heads + spec.kv_heads) * spec.head_dim +
                                             spec.kv_heads * spec.v_head_dim) /
                         tp;
    LayerStep qkv = gemm_step("attn.qkv", tokens, h, width, e);
    qkv.fp8_input_fused = true;  // the input norm writes FP8 (LayerNormLinear)
    fw.push_back(qkv);
    return;
  }
  const double q_width = heads * static_cast<double>(spec.qk_dim());
  if (spec.q_lora_rank > 0) {
    // The down-projection is small and every TP rank computes it whole.
    fw.push_back(gemm_step("attn.q_down", tokens, h, static_cast<double>(spec.q_lora_rank), e));
    fw.push_back(gemm_step("attn.q_up", tokens, static_cast<double>(spec.q_lora_rank), q_width, e));
  } else {
    fw.push_back(gemm_step("attn.q", tokens, h, q_width, e));
  }
  up_recompute.push_back(recompute_copy(fw.back()));
  if (spec.kind == AttentionKind::kLatent) {
    fw.push_back(gemm_step("attn.kv_down", tokens, h,
                           static_cast<double>(spec.kv_lora_rank + spec.rope_dim), e));
    fw.push_back(gemm_step("attn.kv_up", tokens, static_cast<double>(spec.kv_lora_rank),
                           heads * static_cast<double>(spec.head_dim + spec.v_head_dim), e));
    up_recompute.push_back(recompute_copy(fw.back()));
  } else {
    fw.push_back(gemm_step("attn.kv", tokens, h, static_cast<double>(spec.head_dim), e));
  }
  if (spec.kind == AttentionKind::kCompressedSparse) {
    const double q_in = spec.q_lora_rank > 0 ? static_cast<double>(spec.q_lora_rank) : h;
    const double idx_heads = static_cast<double>(spec.indexer_heads) / tp;
    fw.push_back(gemm_step("attn.indexer_q", tokens, q_in,
                           idx_heads * static_cast<double>(spec.indexer_head_dim), e));
    fw.push_back(
        gemm_step("attn.indexer_k", tokens, h, static_cast<double>(spec.indexer_head_dim), e));
    fw.push_back(gemm_step("attn.indexer_w", tokens, h, idx_heads, e));
  }
}

// The rotary position embedding of the queries and keys after their projections, as
// training.rotary_impl runs it (per element, e = the activations' bytes): one fused kernel per
// tensor reading and writing it once, or the reference code's FP32 complex multiply in three
// eager kernels; either costs the same bytes in the backward, which rotates the gradient back.
std::vector<LayerStep> rotary_steps(const AttentionSpec& spec, const AttentionShape& shape,
                                    double tokens) {
  const auto [query, key] = rotated_elements(spec, shape.tp, tokens);
  const double e = bytes_per_element(shape.dtype);
  const ElementwiseKernel fused[] = {{"", 3, 2 * e, 2 * e}};
  const ElementwiseKernel complex_fp32[] = {{".to_fp32", 0, e + kFp32Bytes, e + kFp32Bytes},
                                            {"", 3, 2 * kFp32Bytes, 2 * kFp32Bytes},
                                            {".cast_back", 0, kFp32Bytes + e, kFp32Bytes + e}};
  const auto kernels = shape.rotary_complex_fp32 ? std::span<const ElementwiseKernel>(complex_fp32)
                                                 : std::span<const ElementwiseKernel>(fused);
  std::vector<LayerStep> steps;
  if (query > 0) append_elementwise_kernels("attn.rope.q", kernels, query, steps);
  if (key > 0) append_elementwise_kernels("attn.rope.k", kernels, key, steps);
  return steps;
}

}  // namespace

void append_attention(const AttentionSpec& spec, const AttentionShape& shape, BlockSteps* block) {
  const double e = bytes_per_element(shape.dtype);
  const double tokens = static_cast<double>(shape.micro_batch * shape.seq_length) / shape.cp;
  const double norm_tokens = shape.sequence_parallel ? tokens / shape.tp : tokens;
  const double h = static_cast<double>(spec.hidden);
  auto& fw = block->forward;
  fw.push_back(norm_step("attn.norm", norm_tokens * h, e));
  block->norm_recompute.push_back(recompute_copy(fw.back()));
  open_tp_region(fw, "attn", shape.tp, shape.sequence_parallel, tokens * h * e);
  append_projections(spec, tokens, shape.tp, e, fw, block->up_projection_recompute);
  const std::vector<LayerStep> rotary = rotary_steps(spec, shape, tokens);
  fw.insert(fw.end(), rotary.begin(), rotary.end());
  // Megatron-Core's mla_up_proj recomputes "the MLA up projection and RoPE applying parts".
  if (!own_kv_heads(spec.kind)) {
    append_recompute_copies(rotary, 0, &block->up_projection_recompute);
  }
  append_core(spec, shape, tokens, fw, block->selective_recompute);
  const double heads = static_cast<double>(spec.heads) / shape.tp;
  fw.push_back(gemm_step("attn.proj", tokens, heads * static_cast<double>(spec.v_head_dim), h, e));
  if (own_kv_heads(spec.kind)) {
    // torchtitan's op-level policy: the norm, the key projection (its second matmul), the
    // rotary embedding of the queries and keys (the attention kernel's saved inputs) and the
    // output projection (its fourth).
    auto& again = block->alternate_matmul_recompute;
    again.push_back(block->norm_recompute.back());
    again.push_back(recompute_copy(gemm_step(
        "attn.k", tokens, h, static_cast<double>(spec.kv_heads * spec.head_dim) / shape.tp, e)));
    append_recompute_copies(rotary, 0, &again);
    again.push_back(recompute_copy(fw.back()));
  }
  close_tp_region(fw, "attn", shape.tp, shape.sequence_parallel, tokens * h * e);
  for (LayerStep& step : block->selective_recompute) step = recompute_copy(std::move(step));
}

Workspace attention_workspace(const AttentionSpec& spec, const AttentionShape& shape) {
  if (spec.kind != AttentionKind::kCompressedSparse) return {};
  const double local = static_cast<double>(shape.micro_batch * shape.seq_length) / shape.cp;
  const double rows = shape.indexer_chunk_tokens > 0
                          ? std::min<double>(static_cast<double>(shape.indexer_chunk_tokens), local)
                          : local;
  const double entries = static_cast<double>(shape.seq_length) / spec.ratio;
  const double heads = static_cast<double>(spec.indexer_heads) / shape.tp;
  Workspace w;
  w.name = fmt::format("indexer scores [b, {}, {}, L/{}] in FP32 ({} backward){}", rows, heads,
                       spec.ratio, "unreduced, for the",
                       shape.indexer_chunk_tokens > 0 ? ", one query chunk" : "");
  w.bytes = rows * heads * entries * kFp32Bytes;
  return w;
}

// Whether Megatron-LM's fused scale-mask-softmax kernel takes these scores. FusedScaleMaskSoftmax
// (Megatron-LM and Megatron-DeepSpeed, megatron/model/fused_softmax.py, is_kernel_available;
// NVIDIA's Apache-2.0 header) calls the CUDA kernel only for 16 < keys <= 4096 (2,048 in the 2021
// releases), queries and keys multiples of 4, and micro-batch x heads per rank a multiple of 4
// (of the kernel's batches per block, 4 for causal scores this long); otherwise PyTorch runs the
// softmax op by op.
bool fused_softmax_takes(double attn_batch, double seq) {
  return seq > 16 && seq <= 4096 && std::fmod(seq, 4) == 0 && std::fmod(attn_batch, 4) == 0;
}

}  // namespace racksim
