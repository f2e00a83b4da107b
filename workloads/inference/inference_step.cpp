#include "workloads/inference/inference_step.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "workloads/inference/inference_ledger.h"
#include "workloads/model/layer_steps.h"
#include "workloads/moe/expert_routing.h"
#include "workloads/moe/token_routing.h"
#include "workloads/training/layout.h"
#include "workloads/training/rank_writer.h"
#include "workloads/training/training_step.h"

namespace racksim {

namespace {

// QK^T and AV FLOPs per attended entry per head. MLA decodes with the up-projections absorbed
// into the query and output (DeepSeek's FlashMLA): scores over the kv_lora_rank + rope latent,
// values in the latent.
double flops_per_entry_per_head(const AttentionSpec& spec) {
  if (spec.kind == AttentionKind::kLatent) {
    return 2.0 * static_cast<double>(2 * spec.kv_lora_rank + spec.rope_dim);
  }
  return 2.0 * static_cast<double>(spec.qk_dim() + spec.v_head_dim);
}

// Dense key/value heads are split over TP; a latent cache is read whole by every TP rank.
double kv_split(const AttentionSpec& spec, int tp) {
  return spec.latent() ? 1 : tp;
}

// The norm that opens a sub-layer, with the residual add of the sub-layer before it fused in, as
// inference engines run them (vLLM's and SGLang's fused_add_rms_norm): it reads the sub-layer's
// output and the residual stream and writes the new stream and its normalized copy. The first
// layer's first norm has no residual to add.
LayerStep norm_with_residual(const std::string& name, bool first, double elements, double e) {
  LayerStep step = norm_step(name, elements, e);
  if (!first) {
    step.hbm_bytes *= 2;
    step.flops += elements;
  }
  return step;
}

struct Dtypes {
  double act = 2;     // activations
  double weight = 2;  // weights
  double kv = 2;      // KV cache entries
};

class InferenceWriter {
 public:
  InferenceWriter(const InferencePlan& plan, const InferenceShape& shape, InferenceStep* out)
      : plan_(plan), shape_(shape), model_(plan.model), layout_(plan.layout), out_(out) {
    bytes_ = {bytes_per_element(plan.compute_dtype), bytes_per_element(plan.weight_dtype),
              bytes_per_element(plan.kv_dtype)};
    compute_dtype_ = plan.compute_dtype;
    EventGraph& g = out->graph;
    streams_.compute = g.add_stream(kComputeStream, StreamKind::kCompute);
    streams_.tp = g.add_stream(kTpStream, StreamKind::kComm);
    streams_.pp = g.add_stream(kPpStream, StreamKind::kComm);
    streams_.ep = g.add_stream(kEpStream, StreamKind::kComm);
    plan_experts();
  }

  void write_rank(RankId rank) {
    const RankCoords c = layout_.coords(rank);
    RankWriter writer(&out_->graph, rank, compute_dtype_);
    const CommId tp_comm = out_->graph.add_communicator(layout_.tp_group(rank));
    const CommId ep_comm = out_->graph.add_communicator(layout_.ep_group(rank));
    const auto [first, end] = stage_layers(static_cast<int>(model_.layers()), layout_.pp(), c.pp);
    const int mbs = out_->info.micro_batches;
    ComputeChain chain;
    for (int m = 0; m < mbs; ++m) {
      const OpTag tag{Phase::kForward, m, -1};
      if (c.pp > 0) {
        writer.recv(chain, streams_.pp, "recv.activation", neighbour(c, c.pp - 1), m,
                    activation_bytes(), CommDim::kPp, tag);
      } else {
        write_embedding(writer, chain, tag);
      }
      for (int l = first; l < end; ++l) {
        const OpTag ltag{Phase::kForward, m, l};
        write_attention(writer, chain, tp_comm, l, ltag);
        write_mlp(writer, chain, tp_comm, ep_comm, rank, l, ltag);
      }
      if (c.pp + 1 < layout_.pp()) {
        writer.send(chain, streams_.pp, "send.activation", neighbour(c, c.pp + 1), m,
                    activation_bytes(), CommDim::kPp, false, tag);
      } else {
        write_head(writer, chain, tp_comm, tag);
      }
    }
  }

 private:
  // The new tokens' rows of the word table (a read and a write each); a learned position table
  // (GPT-2, GPT-3) adds their position rows in two more kernels, the lookup and the add.
  void write_embedding(RankWriter& writer, ComputeChain& chain, const OpTag& tag) {
    const double elements = tokens() * h();
    writer.kernel(chain, streams_.compute,
                  elementwise_step("embedding", 2 * elements, 0, bytes_.act), tag);
    if (!model_.learned_positions()) return;
    writer.kernel(chain, streams_.compute,
                  elementwise_step("embedding.position", 2 * elements, 0, bytes_.act), tag);
    writer.kernel(chain, streams_.compute,
                  elementwise_step("embedding.position_add", 3 * elements, elements, bytes_.act),
                  tag);
  }

  double h() const { return static_cast<double>(model_.hidden()); }
  // Sequences of one micro-batch on one rank (fractional when the batch does not split).
  double sequences() const {
    return static_cast<double>(shape_.batch) / (layout_.dp() * out_->info.micro_batches);
  }
  double tokens_per_sequence() const {
    return shape_.phase == InferencePhase::kDecode ? 1.0 : static_cast<double>(shape_.prompt);
  }
  double tokens() const { return sequences() * tokens_per_sequence(); }
  double context() const {
    return static_cast<double>(shape_.phase == InferencePhase::kDecode ? shape_.context
                                                                       : shape_.prompt);
  }
  double activation_bytes() const { return tokens() * h() * bytes_.act / layout_.tp(); }

  RankId neighbour(RankCoords c, int stage) const {
    c.pp = stage;
    return layout_.rank(c);
  }

  // A GEMM over `params` weights for `t` tokens: weights read once, activations in and out.
  LayerStep weight_gemm(const std::string& name, double t, double params, double in_width,
                        double out_width) const {
    LayerStep s = compute_step(name, OpClass::kGemm, 2 * t * params,
                               params * bytes_.weight + t * (in_width + out_width) * bytes_.act);
    return s;
  }

  void tp_all_reduce(RankWriter& w, ComputeChain& chain, CommId tp_comm, const std::string& name,
                     const OpTag& tag) const {
    if (layout_.tp() > 1) {
      w.collective(chain, streams_.tp, name, CollectiveKind::kAllReduce, tp_comm,
                   tokens() * h() * bytes_.act, CommDim::kTp, tag);
    }
  }

  void write_attention(RankWriter& w, ComputeChain& chain, CommId tp_comm, int layer,
                       const OpTag& tag) const {
    const AttentionSpec& spec = model_.attention(layer);
    const int tp = layout_.tp();
    const double t = tokens();
    const double heads = static_cast<double>(spec.heads) / tp;
    w.kernel(chain, streams_.compute,
             norm_with_residual("attn.norm", layer == 0, t * h(), bytes_.act), tag);
    w.kernel(chain, streams_.compute,
             weight_gemm("attn.proj", t, attention_params(spec) / tp, h(), 2 * h() / tp), tag);
    // Rotary embeddings: one kernel rotates the new tokens' queries and keys in place (vLLM's
    // and SGLang's rotary_embedding op).
    const auto [query, key] = rotated_elements(spec, tp, t);
    if (query + key > 0) {
      w.kernel(chain, streams_.compute,
               elementwise_step("attn.rope", 2 * (query + key), 3 * (query + key), bytes_.act),
               tag);
    }
    // Core attention: decode reads each sequence's cache; prefill attends causally within the
    // prompt (half the entries on average) and writes the cache.
    const bool decode = shape_.phase == InferencePhase::kDecode;
    const double entries =
        decode ? attended_entries(spec, context()) : causal_entries(spec, context());
    const double flops = t * entries * heads * flops_per_entry_per_head(spec) +
                         2 * t * indexer_entries(spec, context()) *
                             static_cast<double>(spec.indexer_heads * spec.indexer_head_dim) / tp;
    const double cache = sequences() / kv_split(spec, tp) *
                         (decode ? kv_read_bytes(spec, context(), bytes_.kv)
                                 : kv_cache_bytes(spec, context(), bytes_.kv));
    w.kernel(chain, streams_.compute,
             attention_step("attn.core", flops, cache + 2 * t * heads * spec.qk_dim() * bytes_.act),
             tag);
    tp_all_reduce(w, chain, tp_comm, "attn.all_reduce", tag);
  }

  static double causal_entries(const AttentionSpec& spec, double prompt) {
    const double entries = attended_entries(spec, prompt);
    const bool grows = spec.kind == AttentionKind::kFull || spec.kind == AttentionKind::kLatent ||
                       spec.kind == AttentionKind::kCompressed;
    return grows ? entries / 2 : entries;
  }

  void write_mlp(RankWriter& w, ComputeChain& chain, CommId tp_comm, CommId ep_comm, RankId rank,
                 int layer, const OpTag& tag) const {
    const MlpSpec& spec = model_.mlp(layer);
    const int tp = layout_.tp();
    const double t = tokens();
    w.kernel(chain, streams_.compute, norm_with_residual("mlp.norm", false, t * h(), bytes_.act),
             tag);
    if (spec.moe) {
      write_moe(w, chain, tp_comm, ep_comm, rank, layer, tag);
      return;
    }
    // Its two GEMMs as one step, the activation between them after it (the same time).
    w.kernel(chain, streams_.compute, weight_gemm("mlp.dense", t, mlp_params(spec) / tp, h(), h()),
             tag);
    w.kernel(
        chain, streams_.compute,
        activation_step("mlp.act", spec.gated, t * static_cast<double>(spec.ffn) / tp, bytes_.act),
        tag);
    tp_all_reduce(w, chain, tp_comm, "mlp.all_reduce", tag);
  }

  // A mixture-of-experts MLP: the router, the dispatch to the experts' ranks, the experts this
  // rank holds on the tokens it received, the combine, and the shared experts.
  void write_moe(RankWriter& w, ComputeChain& chain, CommId tp_comm, CommId ep_comm, RankId rank,
                 int layer, const OpTag& tag) const {
    const MlpSpec& spec = model_.mlp(layer);
    const int tp = layout_.tp();
    const double t = tokens();
    const int moe_index = moe_layer_index(layer);
    const double moe_tokens = tp > 1 ? t / tp : t;
    const double routed = moe_tokens * static_cast<double>(spec.top_k);
    const double expert_params = 3 * h() * static_cast<double>(spec.expert_ffn);
    w.kernel(chain, streams_.compute,
             weight_gemm("moe.router", moe_tokens, h() * static_cast<double>(spec.experts), h(),
                         static_cast<double>(spec.experts)),
             tag);
    const int ep = layout_.ep();
    const int j = layout_.ep_index(rank);
    const auto& shares = out_->info.expert_rank_shares[moe_index];
    if (ep > 1) {
      w.collective(chain, streams_.ep, "moe.dispatch", CollectiveKind::kAllToAll, ep_comm,
                   routed * h() * bytes_.act, CommDim::kEp, tag, weights_[moe_index].first);
    }
    // The tokens this rank's experts received, and the weights of the experts they touched.
    const double received = routed * ep * shares[j];
    const double touched =
        expected_touched_experts(out_->info.placements[moe_index],
                                 plan_.expert_layers[moe_index].expert_shares, j, routed * ep);
    LayerStep experts =
        compute_step("moe.experts", OpClass::kGemm, 2 * received * expert_params,
                     touched * expert_params * bytes_.weight + received * 2 * h() * bytes_.act);
    w.kernel(chain, streams_.compute, experts, tag);
    w.kernel(chain, streams_.compute,
             activation_step("moe.experts.act", true,
                             received * static_cast<double>(spec.expert_ffn), bytes_.act),
             tag);
    if (ep > 1) {
      w.collective(chain, streams_.ep, "moe.combine", CollectiveKind::kAllToAll, ep_comm,
                   routed * h() * bytes_.act, CommDim::kEp, tag, weights_[moe_index].second);
    }
    if (spec.shared > 0) {
      w.kernel(chain, streams_.compute,
               weight_gemm("moe.shared", t, static_cast<double>(spec.shared) * expert_params / tp,
                           h(), h()),
               tag);
      w.kernel(
          chain, streams_.compute,
          activation_step("moe.shared.act", true,
                          t * static_cast<double>(spec.shared * spec.expert_ffn) / tp, bytes_.act),
          tag);
      tp_all_reduce(w, chain, tp_comm, "moe.shared.all_reduce", tag);
    }
  }

  // The final norm (with the last layer's residual add) runs over every token, as the engines
  // run the model; the output head on one token per sequence (the next token's logits).
  void write_head(RankWriter& w, ComputeChain& chain, CommId tp_comm, const OpTag& tag) const {
    w.kernel(chain, streams_.compute,
             norm_with_residual("head.norm", false, tokens() * h(), bytes_.act), tag);
    const double seqs = sequences();
    const double vocab = static_cast<double>(model_.vocab()) / layout_.tp();
    w.kernel(chain, streams_.compute, weight_gemm("head", seqs, vocab * h(), h(), vocab), tag);
    if (layout_.tp() > 1) {
      w.collective(chain, streams_.tp, "head.all_gather", CollectiveKind::kAllGather, tp_comm,
                   seqs * bytes_.act * layout_.tp(), CommDim::kTp, tag);
    }
  }

  int moe_layer_index(int layer) const {
    int index = 0;
    for (int l = 0; l < layer; ++l) index += model_.mlp(l).moe ? 1 : 0;
    return index;
  }

  // Per MoE layer of the plan: the dispatch/combine weight tables of its placement, and the
  // placement in the step's info.
  void plan_experts() {
    InferenceStepInfo& info = out_->info;
    const int ep = layout_.ep();
    const std::optional<TokenRouting>& sample = plan_.routing_sample;
    for (const ExpertLayerPlan& layer : plan_.expert_layers) {
      const std::vector<double>& ranks = layer.rank_shares;
      uint32_t dispatch = 0;
      uint32_t combine = 0;
      if (ep > 1 && plan_.node_dedup_dispatch) {
        // One sample (or the rule) serves every layer: the map, and so the matrices, repeat.
        if (info.placements.empty() || info.placements.back().share != layer.map.share) {
          std::tie(dispatch, combine) = add_dedup_weights(
              out_->graph,
              dedup_dispatch_matrix(layer.map, sample, plan_.routing_rule, plan_.ranks_per_node));
        } else {
          std::tie(dispatch, combine) = weights_.back();
        }
      } else if (ep > 1 && imbalance(ranks) > 1 + 1e-12) {
        std::vector<double> table{static_cast<double>(WeightedAllToAll::kByReceiver)};
        table.insert(table.end(), ranks.begin(), ranks.end());
        dispatch = out_->graph.add_weights(table);
        table[0] = static_cast<double>(WeightedAllToAll::kBySender);
        combine = out_->graph.add_weights(table);
      }
      weights_.emplace_back(dispatch, combine);
      info.expert_rank_shares.push_back(ranks);
      info.placements.push_back(layer.map);
    }
  }

  const InferencePlan& plan_;
  InferenceShape shape_;
  const TransformerModel& model_;
  const ParallelLayout& layout_;
  InferenceStep* out_;
  Dtypes bytes_;
  DataType compute_dtype_ = DataType::kBf16;
  PassStreams streams_;
  std::vector<std::pair<uint32_t, uint32_t>> weights_;
};

// What each rank holds: its layers' weights (dense parts split over TP, the experts the
// placement gives it), the embedding on the first stage and the head on the last; and the KV
// cache of its sequences for its layers.
void fill_memory(const InferenceShape& shape, const TransformerModel& model,
                 const ParallelLayout& layout, double weight_bytes, double kv_elem_bytes,
                 InferenceStepInfo* info) {
  const double context =
      static_cast<double>(shape.phase == InferencePhase::kDecode ? shape.context : shape.prompt);
  const uint32_t ranks = layout.num_ranks();
  info->weight_bytes.assign(ranks, 0);
  info->kv_bytes.assign(ranks, 0);
  info->stage_weight_bytes.assign(layout.pp(), 0);
  const double seqs_per_rank = static_cast<double>(shape.batch) / layout.dp();
  for (RankId r = 0; r < ranks; ++r) {
    const RankCoords c = layout.coords(r);
    const auto [first, end] = stage_layers(static_cast<int>(model.layers()), layout.pp(), c.pp);
    double params = 0;
    double kv = 0;
    int moe_index = 0;
    for (int l = 0; l < model.layers(); ++l) {
      const bool moe = model.mlp(l).moe;
      if (l >= first && l < end) {
        const double dense = model.layer_params(l) - model.layer_expert_params(l);
        params += dense / layout.tp();
        if (moe) {
          const auto& spec = model.mlp(l);
          const int held = info->placements[moe_index].experts_on_rank()[layout.ep_index(r)];
          params += held * 3.0 * static_cast<double>(spec.hidden * spec.expert_ffn);
        }
        const AttentionSpec& a = model.attention(l);
        kv += kv_cache_bytes(a, context, kv_elem_bytes) / kv_split(a, layout.tp());
      }
      moe_index += moe ? 1 : 0;
    }
    if (c.pp == 0) params += model.embedding_params() / layout.tp();
    if (c.pp + 1 == layout.pp() && (!model.tied_embeddings() || layout.pp() > 1)) {
      params += model.embedding_params() / layout.tp();
    }
    info->weight_bytes[r] = params * weight_bytes;
    info->kv_bytes[r] = kv * seqs_per_rank;
    info->stage_weight_bytes[c.pp] =
        std::max(info->stage_weight_bytes[c.pp], info->weight_bytes[r]);
  }
  double kv_seq = 0;
  for (int l = 0; l < model.layers(); ++l)
    kv_seq += kv_cache_bytes(model.attention(l), context, kv_elem_bytes);
  info->kv_bytes_per_sequence = kv_seq;
}

}  // namespace

std::pair<int, int> stage_layers(int layers, int stages, int stage) {
  const int base = layers / stages;
  const int extra = layers % stages;
  const int first = stage * base + std::min(stage, extra);
  return {first, first + base + (stage < extra ? 1 : 0)};
}

InferenceStep build_inference_step(const InferencePlan& plan, const InferenceShape& shape) {
  const ParallelLayout& layout = plan.layout;
  const TransformerModel& model = plan.model;
  InferenceStep step{EventGraph(layout.num_ranks()), {}};
  InferenceStepInfo& info = step.info;
  info.stages = layout.pp();
  info.micro_batches = layout.pp();
  info.tokens = static_cast<double>(shape.batch) *
                (shape.phase == InferencePhase::kDecode ? 1.0 : static_cast<double>(shape.prompt));
  info.total_params = model.total_params();
  info.active_params = model.active_params();
  InferenceWriter writer(plan, shape, &step);
  info.weight_bytes_per_param = bytes_per_element(plan.weight_dtype);
  fill_memory(shape, model, layout, bytes_per_element(plan.weight_dtype),
              bytes_per_element(plan.kv_dtype), &info);
  for (RankId r = 0; r < layout.num_ranks(); ++r) writer.write_rank(r);
  return step;
}

}  // namespace racksim
