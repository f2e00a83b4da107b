// The inference step a checked scenario asks for, resolved once into values: the model, the
// layout, the dtypes, the shapes of a decode and a prefill step, and per MoE layer the experts'
// placement over the expert-parallel group. The generator (inference_step.h) receives it and
// reads no scenario field itself.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/event_graph.h"
#include "proto/scenario.pb.h"
#include "workloads/model/transformer.h"
#include "workloads/moe/expert_placement.h"
#include "workloads/moe/routing_rule.h"
#include "workloads/moe/token_routing.h"
#include "workloads/training/layout.h"

namespace racksim {

enum class InferencePhase { kDecode, kPrefill };

struct InferenceShape {
  InferencePhase phase = InferencePhase::kDecode;
  int64_t batch = 1;    // sequences on all GPUs
  int64_t context = 0;  // decode: tokens already cached per sequence
  int64_t prompt = 0;   // prefill: tokens per prompt
};

// One MoE layer's experts: their token shares, where they sit, and the ranks' shares.
struct ExpertLayerPlan {
  std::vector<double> expert_shares;  // per expert
  ExpertPlacementMap map;
  std::vector<double> rank_shares;  // per rank of the EP group, under the map
};

struct InferencePlan {
  TransformerModel model;
  ParallelLayout layout;  // tp x dp ranks per stage, pp stages, ep over a stage's ranks
  DataType compute_dtype = DataType::kBf16;
  DataType weight_dtype = DataType::kBf16;
  DataType kv_dtype = DataType::kBf16;
  InferenceShape decode;
  InferenceShape prefill;
  std::vector<ExpertLayerPlan> expert_layers;  // per MoE layer, in layer order
  // The routing sample behind the shares (expert_placement.routing_file), if any, and whether
  // a node receives each token once (expert_placement.node_dedup_dispatch).
  std::optional<TokenRouting> routing_sample;
  CoOccurrence cooccurrence;  // of the routing sample's experts; empty without one
  bool node_dedup_dispatch = false;
  int ranks_per_node = 1;    // the expert domain: GPUs that share a node's NICs
  RoutingRule routing_rule;  // the model's: the deduplicated dispatch without a sample
  // The shape of `phase`.
  const InferenceShape& shape(InferencePhase phase) const {
    return phase == InferencePhase::kDecode ? decode : prefill;
  }
};

// Resolves a loaded and validated scenario. Throws std::invalid_argument for a layout inference
// cannot run (layout.cp > 1).
InferencePlan resolve_inference_plan(const config::Scenario& scenario);

}  // namespace racksim
