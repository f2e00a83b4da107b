// The event graph of one inference step of a resolved plan (inference_plan.h):
//   decode:  every sequence of the batch gets one token; each layer reads its weights once per
//            micro-batch and each sequence's KV cache (by attention kind, inference_ledger.h);
//   prefill: every sequence's prompt runs through the model once and writes its KV cache.
// Layout: tp x dp ranks per stage, pp stages (rank = tp + TP (dp + DP pp)). Attention is
// data-parallel over dp (each tp group serves batch / dp sequences) and tensor-parallel over tp
// (heads split, an all-reduce after the output projection and after the dense MLP); routed
// experts are split over ep consecutive ranks of a stage (the placement map decides which rank
// holds which expert), with a dispatch and a combine all-to-all weighted by the ranks' loads;
// with pp > 1 the batch is cut into pp micro-batches and activations go stage to stage.
#pragma once

#include <vector>

#include "graph/event_graph.h"
#include "workloads/inference/inference_plan.h"
#include "workloads/moe/expert_placement.h"

namespace racksim {

struct InferenceStepInfo {
  int micro_batches = 1;
  int stages = 1;
  double tokens = 0;  // tokens produced (decode) or processed (prefill) per step
  double total_params = 0;
  double active_params = 0;
  double weight_bytes_per_param = 2;
  double kv_bytes_per_sequence = 0;        // whole model, at the step's context
  std::vector<double> weight_bytes;        // per rank, what it holds
  std::vector<double> kv_bytes;            // per rank, the KV cache of its sequences
  std::vector<double> stage_weight_bytes;  // per stage, the most a rank of it holds
  // Per MoE layer: the ranks' share of routed tokens under the placement (EP group order).
  std::vector<std::vector<double>> expert_rank_shares;
  std::vector<ExpertPlacementMap> placements;  // per MoE layer
};

struct InferenceStep {
  EventGraph graph;
  InferenceStepInfo info;
};

// Builds the step of `plan` at `shape` (usually plan.shape(phase)).
InferenceStep build_inference_step(const InferencePlan& plan, const InferenceShape& shape);

// The stage's layers [first, end) when `layers` are split evenly over `stages` (the first
// stages take one more when they do not divide).
std::pair<int, int> stage_layers(int layers, int stages, int stage);

}  // namespace racksim
