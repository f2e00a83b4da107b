#include "workloads/training/memory_ledger.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "workloads/model/attention_ledger.h"
#include "workloads/model/transformer.h"
#include "workloads/training/head_deferral.h"
#include "workloads/training/layout.h"
#include "workloads/training/memory_transients.h"
#include "workloads/training/step_shape.h"

namespace racksim {

namespace {

// Mixed-precision AdamW: FP32 master weights and the two moments (FP32 unless
// training.optimizer_moment_dtype says otherwise).
double optimizer_bytes_per_param(const TrainingPlan& p) {
  return 4 + 2 * p.training.moment_bytes;
}
// Transformer Engine's FP8 copy of a weight and its transpose (Hopper's FP8 GEMMs read both
// operands K-major, so the backward's data gradient needs the transposed copy).
constexpr double kFp8WeightCopyBytes = 1 + 1;

// sbh of one micro-batch on one rank: its tokens times hidden.
double sbh(const TrainingPlan& p) {
  return rank_tokens(p) * static_cast<double>(p.model.hidden());
}

// The s x s attention scores and their softmax/dropout, 5as/h per sbh element (per score: the
// softmax's 16-bit output, the dropout's 1-byte mask and its 16-bit output), unless the attention
// kernel never stores them (FlashAttention) or selective recompute of the core attention drops
// them. Full recompute keeps them too, in the one layer it rematerialises for its backward. Where
// Megatron's fused softmax kernel does not take the scores, PyTorch's FP32 softmax keeps its FP32
// output for its backward: 4 + 1 + 2 = 7 bytes per score instead of 5.
double score_term(const TrainingPlan& p) {
  const bool stored = p.training.stores_attention_scores && !p.training.recomputes_core_attention;
  if (!stored) return 0;
  const double a = static_cast<double>(p.attention_heads);
  const double h = static_cast<double>(p.model.hidden());
  const double seq = static_cast<double>(p.training.seq_length);
  const double attn_batch =
      static_cast<double>(p.training.micro_batch_size) * a / static_cast<double>(p.layout.tp());
  const double bytes_per_score = fused_softmax_takes(attn_batch, seq) ? 5 : 7;
  return bytes_per_score * a * seq / (h * p.layout.tp());
}

// The tokens an MoE layer routes on one rank (TP splits them first) and the copies it sends to
// experts.
double moe_tokens(const TrainingPlan& p) {
  return rank_tokens(p) / p.layout.tp();
}
double routed_copies(const TrainingPlan& p, const MlpSpec& mlp) {
  return moe_tokens(p) * static_cast<double>(mlp.top_k);
}

// Bytes per saved element: of a tensor kept as computed, of a linear layer's input, of the FP8
// copy kept beside a 16-bit one. FP8 training under training.fp8_activations LINEAR_INPUTS keeps
// the first in BF16; otherwise every element takes the training dtype's bytes.
struct ElementBytes {
  double kept = 2;
  double linear = 2;
  double fp8_copy = 0;
};

ElementBytes element_bytes(const TrainingPlan& p) {
  if (p.training.dtype == DataType::kFp8 && p.training.fp8_linear_inputs_only) return {2, 1, 1};
  const double e = bytes_per_element(p.training.dtype);
  return {e, e, 0};
}

// The share of the hidden stream's tensors one TP rank keeps: all of them, or 1/t under SP.
double stream_share(const TrainingPlan& p) {
  return p.shape.sequence_parallel ? 1.0 / p.layout.tp() : 1.0;
}

// Elements per token one rank keeps of `saved` (the stream's share, the heads' 1/t, the latents
// whole), by their bytes: kept as computed, linear layers' inputs, FP8 copies.
struct RankElements {
  double kept = 0;
  double linear = 0;
  double fp8_copies = 0;
};

RankElements rank_elements(const TrainingPlan& p, const SavedActivations& saved) {
  const double share = stream_share(p);
  const double t = p.layout.tp();
  const double all = saved.stream * share + saved.heads / t + saved.latent;
  const double linear = saved.linear_stream * share + saved.linear_heads / t + saved.linear_latent;
  return {all - linear, linear, saved.fp8_copies / t};
}

double rank_bytes(const TrainingPlan& p, const SavedActivations& saved) {
  const ElementBytes b = element_bytes(p);
  const RankElements n = rank_elements(p, saved);
  return n.kept * b.kept + n.linear * b.linear + n.fp8_copies * b.fp8_copy;
}

// One class of `saved`: its hidden-stream, per-head or latent tensors (the FP8 copies are
// per-head).
enum class SavedClass : uint8_t { kStream, kHeads, kLatent };

SavedActivations only(const SavedActivations& s, SavedClass which) {
  SavedActivations c;
  switch (which) {
    case SavedClass::kStream:
      std::tie(c.stream, c.linear_stream) = std::pair(s.stream, s.linear_stream);
      break;
    case SavedClass::kHeads:
      std::tie(c.heads, c.linear_heads, c.fp8_copies) =
          std::tuple(s.heads, s.linear_heads, s.fp8_copies);
      break;
    case SavedClass::kLatent:
      std::tie(c.latent, c.linear_latent) = std::pair(s.latent, s.linear_latent);
      break;
  }
  return c;
}

// What `saved` keeps for the rank's micro-batch.
MemoryItem part(std::string name, const TrainingPlan& p, const SavedActivations& saved) {
  const double tokens = rank_tokens(p);
  const ElementBytes b = element_bytes(p);
  const RankElements n = rank_elements(p, saved);
  std::string detail =
      b.kept == b.linear
          ? fmt::format("{:.0f} tokens x {:.6g} elements x {:g} B", tokens, n.kept + n.linear,
                        b.kept)
          : fmt::format("{:.0f} tokens x ({:.6g} elements x {:g} B + {:.6g} linear inputs x {:g} B",
                        tokens, n.kept, b.kept, n.linear, b.linear);
  if (b.kept != b.linear) {
    detail += n.fp8_copies * b.fp8_copy > 0
                  ? fmt::format(" + {:.6g} FP8 copies x {:g} B)", n.fp8_copies, b.fp8_copy)
                  : ")";
  }
  return {std::move(name), tokens * rank_bytes(p, saved), detail};
}

// A SwiGLU block of `ffn` per token: the activation's input (gate and up) kept, its output a
// linear input.
double swiglu_bytes(const ElementBytes& b, double ffn) {
  return 2 * ffn * b.kept + ffn * b.linear;
}

// An MoE layer keeps, besides its input: the router's FP32 scores over the experts, per routed
// token copy the dispatched input (the experts' linear input) and the SwiGLU's, and the shared
// experts' SwiGLU.
MemoryItem moe_item(const TrainingPlan& p, const MlpSpec& mlp) {
  const ElementBytes b = element_bytes(p);
  const double tokens = moe_tokens(p);
  const double f = static_cast<double>(mlp.expert_ffn);
  const double scores = tokens * static_cast<double>(mlp.experts) * kFp32Bytes;
  const double per_copy = static_cast<double>(mlp.hidden) * b.linear + swiglu_bytes(b, f);
  const double shared = tokens * static_cast<double>(mlp.shared) * swiglu_bytes(b, f);
  return {"experts: router scores and routed copies",
          scores + routed_copies(p, mlp) * per_copy + shared,
          fmt::format("{:.0f} tokens x {} FP32 scores + {:.0f} copies x {:.6g} B{}", tokens,
                      mlp.experts, routed_copies(p, mlp), per_copy,
                      mlp.shared > 0 ? fmt::format(" + {:.0f} tokens x {} shared x {:.6g} B",
                                                   tokens, mlp.shared, swiglu_bytes(b, f))
                                     : "")};
}

// What a layer's two blocks keep, per token, by how TP and SP divide it.
struct LayerSaved {
  SavedActivations attention;
  SavedActivations mlp;  // an MoE block: its input alone, the router's (the rest is moe_item)
};

LayerSaved layer_saved(const AttentionSpec& attention, const MlpSpec& mlp) {
  SavedActivations ffn;
  ffn.stream = static_cast<double>(mlp.hidden);  // the router runs in 16-bit, not FP8
  if (!mlp.moe) ffn = dense_mlp_saved_activations(mlp);
  return {attention_saved_activations(attention), ffn};
}

// What training.recompute_modules keeps out of a layer's activations (as a negative part): with
// LAYERNORM the norms' outputs (the attention's and the feed-forward block's inputs); with
// MLA_UP_PROJ the latent attention's up-projection outputs; with MLP a dense MLP's
// intermediates; with MOE everything the MoE block keeps but its input; with MOE_ACT the SwiGLU's
// output of every routed copy (the second expert GEMM's input); with SHARED_EXPERTS the shared
// experts' intermediates.
MemoryItem recomputed_modules(const TrainingPlan& p, const LayerSaved& saved, const MlpSpec& mlp) {
  const TrainingSettings& t = p.training;
  const ElementBytes b = element_bytes(p);
  double bytes = 0;
  std::vector<std::string> what;
  auto drop = [&](bool on, double more, const char* name) {
    if (!on || more <= 0) return;
    bytes += more;
    what.emplace_back(name);
  };
  const double tokens = rank_tokens(p);
  drop(t.recomputes_norms,
       tokens * (rank_bytes(p, only(saved.attention, SavedClass::kStream)) +
                 rank_bytes(p, only(saved.mlp, SavedClass::kStream))),
       "the norms' outputs");
  SavedActivations up;
  up.heads = saved.attention.up_projection;
  drop(t.recomputes_up_projections, tokens * rank_bytes(p, up), "the up-projections' outputs");
  drop(t.recomputes_mlp, tokens * rank_bytes(p, only(saved.mlp, SavedClass::kHeads)),
       "the MLP's intermediates");
  if (mlp.moe) {
    const double f = static_cast<double>(mlp.expert_ffn);
    drop(t.recomputes_moe, moe_item(p, mlp).bytes, "the MoE block's tensors");
    drop(t.recomputes_moe_activation, routed_copies(p, mlp) * f * b.linear,
         "the experts' SwiGLU outputs");
    drop(t.recomputes_shared_experts,
         moe_tokens(p) * static_cast<double>(mlp.shared) * swiglu_bytes(b, f),
         "the shared experts' intermediates");
  }
  return {"run again in the backward, not kept", -bytes, fmt::format("{}", fmt::join(what, ", "))};
}

// Without recompute a layer keeps the inputs of its two norms (the residual stream), with hidden
// dropout the two residual adds' one-byte masks, what its attention and feed-forward blocks save
// (their kernels' inputs, from their shapes) and the stored attention scores; selective
// recompute's modules take theirs out. For GPT's blocks (full attention, a GELU MLP of 4h) in
// 16-bit this is Korthikanti et al.'s sbh(10 + 24/t + 5as/(ht)), and sbh(34/t + 5as/(ht)) under
// SP.
std::vector<MemoryItem> layer_parts_without_full_recompute(const TrainingPlan& p,
                                                           const AttentionSpec& attention,
                                                           const MlpSpec& mlp) {
  const double h = static_cast<double>(p.model.hidden());
  const LayerSaved saved = layer_saved(attention, mlp);
  std::vector<MemoryItem> parts;
  auto add = [&](MemoryItem item) {
    if (item.bytes != 0) parts.push_back(std::move(item));
  };
  SavedActivations norms;
  norms.stream = 2 * h;
  add(part("norms' inputs (the residual stream)", p, norms));
  add(part("attention: its input", p, only(saved.attention, SavedClass::kStream)));
  add(part("attention: queries, keys, values, output", p,
           only(saved.attention, SavedClass::kHeads)));
  add(part("attention: latents", p, only(saved.attention, SavedClass::kLatent)));
  add(part("feed-forward: its input", p, only(saved.mlp, SavedClass::kStream)));
  add(part("MLP: activation's input and output", p, only(saved.mlp, SavedClass::kHeads)));
  if (mlp.moe) add(moe_item(p, mlp));
  if (mlp.dropout) {
    const double masks = rank_tokens(p) * 2 * h * stream_share(p);
    add({"dropout masks (two residual adds)", masks, "1 B an element"});
  }
  add({"stored attention scores", sbh(p) * score_term(p) * element_bytes(p).kept / 2,
       "the softmax's output, dropout mask and output: 5 B a score (7 in PyTorch's FP32 softmax)"});
  add(recomputed_modules(p, saved, mlp));
  return parts;
}

// torchtitan's op-level policy (ALTERNATE_MATMULS) keeps the layer's input (where its checkpoint
// starts), the outputs of the query, value and first MLP projections and of the attention
// kernel, and under SwiGLU the down projection's (the seventh matmul's, kept though no backward
// reads it); the rest is run again.
std::vector<MemoryItem> alternate_matmul_parts(const TrainingPlan& p,
                                               const AttentionSpec& attention, const MlpSpec& mlp) {
  const double h = static_cast<double>(p.model.hidden());
  SavedActivations stream;
  stream.stream = mlp.gated ? 2 * h : h;
  SavedActivations heads;
  heads.heads = static_cast<double>(attention.heads * attention.qk_dim() +
                                    attention.kv_heads * attention.v_head_dim +
                                    attention.heads * attention.v_head_dim + mlp.ffn);
  return {part(mlp.gated ? "input, down projection output" : "the layer's input", p, stream),
          part("q, v, attn, first MLP outputs", p, heads)};
}

double layer_bytes_without_full_recompute(const TrainingPlan& p, const AttentionSpec& attention,
                                          const MlpSpec& mlp) {
  return total_bytes(layer_parts_without_full_recompute(p, attention, mlp));
}

// Bytes one rank holds of `params` at `bytes` each, dense and expert parameters each split over
// its own shards.
double sharded_bytes(const RankParams& params, double bytes, const RankParams& shards) {
  return (params.dense / shards.dense + params.expert / shards.expert) * bytes;
}

MemoryItem static_item(const char* name, const RankParams& params, double bytes,
                       const RankParams& shards, const std::string& where) {
  const double per_rank = sharded_bytes(params, bytes, shards);
  std::string detail = fmt::format("{:.4g} parameters x {} B", params.total(), bytes);
  if (params.expert > 0 && (shards.dense > 1 || shards.expert > 1)) {
    detail += fmt::format(", sharded {:g}-way (dense) and {:g}-way (experts)", shards.dense,
                          shards.expert);
  } else if (shards.dense > 1) {
    detail += fmt::format(", sharded {:g}-way", shards.dense);
  }
  if (!where.empty()) detail += ", " + where;
  return {name, per_rank, detail};
}

}  // namespace

double rank_tokens(const TrainingPlan& p) {
  return static_cast<double>(p.training.seq_length) *
         static_cast<double>(p.training.micro_batch_size) / p.shape.cp;
}

double layer_bytes_without_full_recompute(const TrainingPlan& p, int layer) {
  return layer_bytes_without_full_recompute(p, p.model.attention(layer), p.model.mlp(layer));
}

double op_policy_kept_bytes(const TrainingPlan& p, int layer) {
  return total_bytes(alternate_matmul_parts(p, p.model.attention(layer), p.model.mlp(layer)));
}

double total_bytes(const std::vector<MemoryItem>& items) {
  double total = 0;
  for (const MemoryItem& item : items) total += item.bytes;
  return total;
}

double MemoryLedger::static_bytes() const {
  return total_bytes(static_items);
}

double MemoryLedger::peak_bytes() const {
  return static_bytes() + activations.bytes + largest_transient.bytes;
}

std::vector<MemoryItem> layer_activation_parts(const TrainingPlan& p, int layer) {
  if (p.training.recomputes_layer(layer)) {
    const int group = p.training.recompute_group_at(layer);
    if (group == 0) return {};  // an earlier layer's group keeps the input
    SavedActivations input;
    input.stream = static_cast<double>(p.model.hidden());
    return {part(group == 1 ? std::string("the layer's input (all full recompute keeps)")
                            : fmt::format("the input of a group of {} layers (all uniform full "
                                          "recompute keeps)",
                                          group),
                 p, input)};
  }
  if (p.training.recomputes_alternate_matmuls) {
    return alternate_matmul_parts(p, p.model.attention(layer), p.model.mlp(layer));
  }
  return layer_parts_without_full_recompute(p, p.model.attention(layer), p.model.mlp(layer));
}

double layer_activation_bytes(const TrainingPlan& p, int layer) {
  return total_bytes(layer_activation_parts(p, layer));
}

double layer_activation_bytes(const TrainingPlan& p) {
  return layer_activation_bytes(p, 0);
}

double in_flight_activation_bytes(const PassOrder& order, const std::vector<double>& chunk_bytes) {
  double outstanding = 0;
  double peak = 0;
  for (const PipelinePass& p : order) {
    const double bytes = chunk_bytes[static_cast<size_t>(p.local_chunk)];
    if (p.kind == PassKind::kForward) peak = std::max(peak, outstanding += bytes);
    if (p.kind == PassKind::kBackward || p.kind == PassKind::kBackwardInput) outstanding -= bytes;
  }
  return peak;
}

int in_flight_chunk_passes(const PassOrder& order) {
  int chunks = 0;
  for (const PipelinePass& p : order) chunks = std::max(chunks, p.local_chunk + 1);
  // Every chunk weighs one: the peak of bytes is the peak of passes.
  return static_cast<int>(in_flight_activation_bytes(order, std::vector<double>(chunks, 1.0)));
}

namespace {

// Whether the chunk runs the multi-token-prediction modules: the one of their own, or where
// micro-batches leave the model.
bool runs_mtp_modules(const TrainingPlan& p, const ChunkRef& chunk) {
  if (p.model.mtp_depth() == 0) return false;
  return p.map.standalone_mtp_position() < 0 ? p.map.ends_route(chunk)
                                             : p.map.runs_standalone_mtp(chunk);
}

// What a stage's layers keep for one micro-batch, each layer's bytes computed once: per chunk
// (chunks of unequal sizes where the split counts the embedding, the loss or MTP as layers; an
// MTP module keeps what a layer like the last one keeps), and its largest layer (the first such;
// -1 if the stage holds none).
struct StageLayers {
  std::vector<double> chunk_bytes;
  std::vector<std::string> chunk_layers;  // "4", or "(4+1 MTP)"
  int largest = -1;
  double largest_bytes = 0;
};

StageLayers stage_layers(const TrainingPlan& p, int stage) {
  StageLayers s;
  const int last_layer = static_cast<int>(p.model.layers()) - 1;
  for (int k = 0; k < p.map.chunks_per_stage(); ++k) {
    const LayerRange layers = p.map.layers({stage, k});
    double bytes = 0;
    for (int l = layers.first; l < layers.first + layers.count; ++l) {
      const double layer = layer_activation_bytes(p, l);
      bytes += layer;
      if (s.largest >= 0 && layer <= s.largest_bytes) continue;
      s.largest = l;
      s.largest_bytes = layer;
    }
    std::string held = std::to_string(layers.count);
    if (runs_mtp_modules(p, {stage, k})) {
      bytes += p.model.mtp_depth() * layer_activation_bytes(p, last_layer);
      held = fmt::format("({}+{} MTP)", layers.count, p.model.mtp_depth());
    }
    s.chunk_bytes.push_back(bytes);
    s.chunk_layers.push_back(held);
  }
  return s;
}

// The activations stage `stage` holds at most, chunk by chunk as its schedule runs them; with
// offloading, two layers' worth on the GPU and the rest added to `host_bytes`.
MemoryItem activations_item(const TrainingPlan& p, int stage, const StageLayers& layers,
                            double* host_bytes) {
  const std::vector<double>& chunk_bytes = layers.chunk_bytes;
  const PassOrder& order = p.orders[static_cast<size_t>(stage)];
  const int in_flight = in_flight_chunk_passes(order);
  const double peak = in_flight_activation_bytes(order, chunk_bytes);
  const bool equal = std::all_of(chunk_bytes.begin(), chunk_bytes.end(),
                                 [&](double b) { return b == chunk_bytes.front(); });
  const std::string detail =
      equal ? fmt::format(
                  "{:.4g} B for the {} layers of a chunk x {} chunk passes in flight "
                  "(from the schedule)",
                  chunk_bytes.front(), layers.chunk_layers.front(), in_flight)
            : fmt::format(
                  "at most {} chunk passes in flight, of chunks holding {} layers (from "
                  "the schedule)",
                  in_flight, fmt::join(layers.chunk_layers, "/"));
  if (!p.training.offload_activations) return {"activations", peak, detail};
  // Double-buffered offload: one layer's activations in use and the next one's in transit.
  *host_bytes += peak;
  return {"activations", 2 * layers.largest_bytes,
          fmt::format("2 x {:.4g} B (double-buffered offload; {:.4g} B of {} chunk passes in "
                      "host memory)",
                      layers.largest_bytes, peak, in_flight)};
}

// The weights. FP8 training keeps them in BF16 (2 B) and, over the step, Transformer Engine's FP8
// copy and transpose of each FP8 GEMM's weight (cast in the first micro-batch, reused by the
// others: the cast kernels of training/rank_writer.h). With FP8 parameters
// (training.fp8_param_gather) those weights live in FP8 (1 B) with their transpose (1 B) and no
// BF16 copy. The embedding and output tables run in BF16 either way and have no FP8 copy.
void append_weight_items(const TrainingPlan& p, const RankParams& params, const RankParams& shards,
                         std::vector<MemoryItem>* items) {
  const bool fp8 = p.training.dtype == DataType::kFp8;
  const double bytes = bytes_per_element(fp8 ? DataType::kBf16 : p.training.dtype);
  if (!fp8) {
    items->push_back(static_item("weights", params, bytes, shards, ""));
    return;
  }
  const double tables = params.tables;
  const RankParams gemm_weights{params.dense - tables, params.expert};
  if (p.training.fp8_param_gather) {
    MemoryItem item = static_item("weights", gemm_weights, 1, shards,
                                  "FP8 GEMM weights (training.fp8_param_gather)");
    item.bytes += sharded_bytes({tables, 0}, bytes, shards);
    item.detail +=
        fmt::format(", and {:.4g} embedding and output parameters x {} B", tables, bytes);
    items->push_back(item);
    items->push_back(static_item("FP8 weight transposes", gemm_weights, 1, shards,
                                 "each FP8 GEMM weight's transpose, for the backward"));
    return;
  }
  items->push_back(static_item("weights", params, bytes, shards, "BF16"));
  items->push_back(static_item("FP8 weight copies", gemm_weights, kFp8WeightCopyBytes, shards,
                               "FP8 copy and transpose of each FP8 GEMM's weight (not the "
                               "embedding and output tables)"));
}

// training.defer_embedding_wgrad on the stage where micro-batches leave the model: per deferred
// micro-batch Megatron-Core keeps the output layer's input (its sequence-parallel shard) and the
// logits' gradient [s, b, V/tp] in BF16 until the drain (ColumnParallelLinear's
// embedding_activation_buffer and grad_output_buffer).
std::optional<MemoryItem> deferred_wgrad_item(const TrainingPlan& p, int stage) {
  if (!p.training.defer_embedding_wgrad || !p.map.stage_ends_route(stage)) return std::nullopt;
  const double tokens = rank_tokens(p);
  const double input_tokens = p.shape.sequence_parallel ? tokens / p.layout.tp() : tokens;
  const double vocab_local = static_cast<double>(p.model.vocab()) / p.layout.tp();
  const int calls = 1 + p.model.mtp_depth();  // the output layer's, per micro-batch
  const int kept = deferred_head_micro_batches(p);
  const double each =
      2 * (input_tokens * static_cast<double>(p.model.hidden()) + tokens * vocab_local);
  const std::string per_call = calls > 1 ? fmt::format(" x {} output-layer calls", calls) : "";
  return MemoryItem{
      "deferred lm_head wgrad inputs", kept * calls * each,
      fmt::format("{} micro-batches{} x ({:.0f} input tokens x {} hidden + {:.0f} "
                  "tokens x {:.0f} vocabulary entries) x 2 B",
                  kept, per_call, input_tokens, p.model.hidden(), tokens, vocab_local)};
}

}  // namespace

MemoryLedger memory_ledger(const TrainingPlan& p, RankId rank) {
  const ParallelLayout& layout = p.layout;
  const PipelineMap& map = p.map;
  const RankCoords c = layout.coords(rank);
  MemoryLedger ledger;
  ledger.rank = rank;
  ledger.capacity_bytes = p.cluster.hbm_bytes;

  const RankParams params = rank_params(p.model, layout, map, rank);
  const int zero = p.training.zero_stage;
  const RankParams replicas{static_cast<double>(layout.dp_cp_group(rank).size()),
                            static_cast<double>(layout.expert_dp_group(rank).size())};
  const RankParams whole{1, 1};
  append_weight_items(p, params, zero >= 3 ? replicas : whole, &ledger.static_items);
  const double grad_bytes = bytes_per_element(p.training.grad_reduce_dtype);
  ledger.static_items.push_back(
      static_item("gradients", params, grad_bytes, zero >= 2 ? replicas : whole, ""));
  if (p.training.offload_optimizer) {
    MemoryItem host = static_item("optimizer states", params, optimizer_bytes_per_param(p),
                                  zero >= 1 ? replicas : whole, "in host memory (offloaded)");
    ledger.host_bytes = host.bytes;
    host.bytes = 0;
    ledger.static_items.push_back(host);
  } else {
    ledger.static_items.push_back(static_item("optimizer states", params,
                                              optimizer_bytes_per_param(p),
                                              zero >= 1 ? replicas : whole, ""));
  }

  if (auto deferred = deferred_wgrad_item(p, c.pp)) ledger.static_items.push_back(*deferred);
  const StageLayers layers = stage_layers(p, c.pp);
  ledger.activations = activations_item(p, c.pp, layers, &ledger.host_bytes);
  ledger.layer = layers.largest;
  if (ledger.layer >= 0) ledger.layer_parts = layer_activation_parts(p, ledger.layer);
  ledger.largest_transient = largest_transient(p, c.pp);
  return ledger;
}

const MemoryItem& MemoryLedger::culprit() const {
  const MemoryItem* largest = &activations;
  for (const MemoryItem& item : static_items) {
    if (item.bytes > largest->bytes) largest = &item;
  }
  if (largest_transient.bytes > largest->bytes) largest = &largest_transient;
  return *largest;
}

std::vector<MemoryLedger> stage_memory_ledgers(const TrainingPlan& p) {
  std::vector<MemoryLedger> stages;
  for (int stage = 0; stage < p.layout.pp(); ++stage) {
    stages.push_back(memory_ledger(p, p.layout.rank(RankCoords{0, 0, 0, stage})));
  }
  return stages;
}

const MemoryLedger& fullest(const std::vector<MemoryLedger>& ledgers) {
  size_t worst = 0;
  for (size_t i = 1; i < ledgers.size(); ++i) {
    if (ledgers[i].peak_bytes() > ledgers[worst].peak_bytes()) worst = i;
  }
  return ledgers.at(worst);
}

MemoryLedger worst_memory_ledger(const TrainingPlan& p) {
  return fullest(stage_memory_ledgers(p));
}

}  // namespace racksim
