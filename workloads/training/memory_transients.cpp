// The largest single allocation a stage makes on top of the activations it keeps: the loss's
// logits, what recompute rematerialises, an attention kernel's scratch.
#include "workloads/training/memory_transients.h"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "workloads/model/attention_ledger.h"
#include "workloads/model/transformer.h"
#include "workloads/training/memory_ledger.h"

namespace racksim {
namespace {

// What full recompute rematerialises at once from layer `first`, which opens a group: the
// no-recompute activations of the group's layers (one unless recompute_method is UNIFORM).
MemoryItem rematerialised_group(const TrainingPlan& p, int first) {
  const int group = p.training.recompute_group_at(first);
  double bytes = 0;
  for (int l = first; l < first + group; ++l) {
    bytes += layer_bytes_without_full_recompute(p, l);
  }
  if (group == 1) {
    return {"one layer's activations rematerialised by full recompute", bytes,
            "the no-recompute activations of one layer and micro-batch"};
  }
  return {fmt::format("{} layers' activations rematerialised by full recompute", group), bytes,
          fmt::format("the no-recompute activations of a uniform group of {} layers, one "
                      "micro-batch",
                      group)};
}

// What torchtitan's op policy rematerialises before layer `layer`'s backward: the layer's
// no-recompute activations less the tensors the policy keeps.
MemoryItem rematerialised_by_op_policy(const TrainingPlan& p, int layer) {
  return {"one layer's tensors rematerialised by the op policy (ALTERNATE_MATMULS)",
          layer_bytes_without_full_recompute(p, layer) - op_policy_kept_bytes(p, layer),
          "the no-recompute activations of one layer and micro-batch less those the policy keeps"};
}

}  // namespace

MemoryItem largest_transient(const TrainingPlan& p, int stage) {
  const TransformerModel& model = p.model;
  const ParallelLayout& layout = p.layout;
  const PipelineMap& map = p.map;
  const double tokens = rank_tokens(p);
  MemoryItem transient{"none", 0, ""};
  auto consider = [&](MemoryItem item) {
    if (item.bytes > transient.bytes) transient = std::move(item);
  };
  for (int c = 0; c < map.chunks_per_stage(); ++c) {
    const ChunkRef chunk{stage, c};
    if (map.ends_route(chunk)) {
      const double vocab_local = static_cast<double>(model.vocab()) / layout.tp();
      consider(
          {"lm_head logits [b, s, V/tp] bf16 + fp32 softmax", tokens * vocab_local * (2 + 4),
           fmt::format("{:.0f} tokens x {:.0f} vocabulary entries x 6 B", tokens, vocab_local)});
    }
    const LayerRange layers = map.layers(chunk);
    for (int l = layers.first; l < layers.first + layers.count; ++l) {
      // A layer of a group an earlier layer opened is rematerialised with that group.
      if (p.training.recomputes_layer(l) && p.training.recompute_group_at(l) > 0) {
        consider(rematerialised_group(p, l));
      }
      if (p.training.recomputes_alternate_matmuls) consider(rematerialised_by_op_policy(p, l));
      const Workspace w = attention_workspace(model.attention(l), attention_shape(p.shape));
      consider(
          {w.name, w.bytes, fmt::format("layer {} ({})", l, to_string(model.attention(l).kind))});
    }
  }
  return transient;
}

}  // namespace racksim
