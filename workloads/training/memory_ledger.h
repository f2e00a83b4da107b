// The memory ledger of a training rank: does the step fit in HBM, and if not, what does not.
//
// Three accounts (the seed case's lesson: a single huge transient allocation is a different
// problem from accumulated activations):
//   - static: weights, gradients and optimizer states of the rank's parameters;
//   - activations: what the forward keeps for the backward, per layer and micro-batch, times the
//     micro-batches in flight under the schedule (1F1B: stage s holds min(p - s, m));
//   - transient: the largest single workspace one operation needs at once.
// peak = static + activations + transient.
#pragma once

#include <string>
#include <vector>

#include "graph/event_graph.h"
#include "workloads/training/pipeline_schedule.h"
#include "workloads/training/training_plan.h"

namespace racksim {

struct MemoryItem {
  std::string name;
  double bytes = 0;
  std::string detail;  // how it was computed
};

// The sum of the items' bytes.
double total_bytes(const std::vector<MemoryItem>& items);

// Headroom under which a fit is marginal: what the ledger leaves out (the CUDA context, NCCL's
// buffers, the allocator's fragmentation) takes about this much.
inline constexpr double kMarginalSpareBytes = 2e9;

struct MemoryLedger {
  RankId rank = 0;
  double capacity_bytes = 0;
  std::vector<MemoryItem> static_items;  // weights, gradients, optimizer states
  MemoryItem activations;
  // What the stage's largest layer keeps for one micro-batch, part by part (they sum to its
  // bytes; a recompute module's saving is a negative part); layer -1: the stage holds none.
  int layer = -1;
  std::vector<MemoryItem> layer_parts;
  MemoryItem largest_transient;
  double host_bytes = 0;  // what the rank keeps in host memory (offloaded optimizer states)
  double static_bytes() const;
  double peak_bytes() const;
  bool fits() const { return peak_bytes() <= capacity_bytes; }
  bool fits_with_headroom() const { return peak_bytes() <= capacity_bytes - kMarginalSpareBytes; }
  // The single largest entry (a static item, the activations or the transient): what to cut
  // first when the rank does not fit.
  const MemoryItem& culprit() const;
};

// Activation bytes one transformer layer keeps for one micro-batch: its norms' inputs, what its
// attention and feed-forward blocks' kernels save (their SavedActivations, from the shapes: a
// MoE layer's routed copies instead of a dense MLP's), hidden dropout's masks and any stored
// attention scores. For GPT's blocks this is Korthikanti et al.'s (2022)
//   no recompute: sbh(10 + 24/t + 5as/(ht)) with TP, sbh(34/t + 5as/(ht)) with TP + SP;
//   selective recompute of the core attention: the same without the 5as/(ht) of the scores;
//   full recompute: the layer input, 2sbh (2sbh/t with SP).
// With FlashAttention (training.flash_attention, the default) the scores are never stored.
// Selective recompute's other modules (training.recompute_modules) drop what they run again.
// Of layer `layer`; the one-argument form is layer 0.
double layer_activation_bytes(const TrainingPlan& plan, int layer);
double layer_activation_bytes(const TrainingPlan& plan);
// The same, part by part (norms' inputs, the attention's, the feed-forward block's, masks,
// scores, what recompute modules keep out), each with how it was computed.
std::vector<MemoryItem> layer_activation_parts(const TrainingPlan& plan, int layer);
// The tokens of one micro-batch on one rank (after the CP split).
double rank_tokens(const TrainingPlan& plan);
// Layer `layer`'s activations for one micro-batch as if nothing were recomputed, and the share of
// them torchtitan's op policy (ALTERNATE_MATMULS) keeps: what recompute rematerialises
// (memory_transients.h).
double layer_bytes_without_full_recompute(const TrainingPlan& plan, int layer);
double op_policy_kept_bytes(const TrainingPlan& plan, int layer);

// The most chunk-forwards whose activations a stage holds at once, read off its pass order (a
// forward adds one, a backward's input-gradient part releases one).
int in_flight_chunk_passes(const PassOrder& order);
// The most activation bytes a stage holds at once, a forward adding its chunk's `chunk_bytes`
// (by local chunk) and a backward's input-gradient part releasing them.
double in_flight_activation_bytes(const PassOrder& order, const std::vector<double>& chunk_bytes);

// The ledger of `rank`.
MemoryLedger memory_ledger(const TrainingPlan& plan, RankId rank);

// The ledger of the rank with the highest peak (the lowest such rank on ties).
MemoryLedger worst_memory_ledger(const TrainingPlan& plan);

// The ledger of the first rank of each pipeline stage (ranks of one stage hold the same).
std::vector<MemoryLedger> stage_memory_ledgers(const TrainingPlan& plan);

// Of these ledgers, the one with the highest peak (the first such on ties).
const MemoryLedger& fullest(const std::vector<MemoryLedger>& ledgers);

}  // namespace racksim
