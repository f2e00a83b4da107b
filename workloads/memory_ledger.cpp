#include "workloads/memory_ledger.h"

#include <algorithm>

#include <fmt/format.h>

#include "workloads/layout.h"
#include "workloads/training_step.h"
#include "workloads/transformer.h"

namespace racksim {

namespace {

// Mixed-precision AdamW: FP32 master weights and the two FP32 moments.
constexpr double kOptimizerBytesPerParam = 12;

// sbh for one micro-batch: the activation tensor's element count.
double sbh(const config::Scenario& s) {
  return static_cast<double>(s.training().seq_length()) *
         static_cast<double>(s.training().micro_batch_size()) *
         static_cast<double>(s.model().hidden_size());
}

// Korthikanti's formulas count 2-byte activations.
double dtype_scale(const config::Scenario& s) {
  return bytes_per_element(to_data_type(s.training().dtype())) / 2;
}

// The s x s attention scores and their softmax/dropout, 5as/h per sbh element, unless the
// attention kernel never stores them (FlashAttention) or selective recompute drops them.
double score_term(const config::Scenario& s) {
  const bool stored = s.training().has_flash_attention() && !s.training().flash_attention() &&
                      s.training().recompute() == config::Training::NONE;
  if (!stored) return 0;
  const double a = static_cast<double>(s.model().num_heads());
  const double h = static_cast<double>(s.model().hidden_size());
  const double seq = static_cast<double>(s.training().seq_length());
  return 5 * a * seq / (h * s.layout().tp());
}

double layer_bytes_without_recompute(const config::Scenario& s) {
  const double t = s.layout().tp();
  const double linear = s.layout().sequence_parallel() ? 34 / t : 10 + 24 / t;
  return sbh(s) * (linear + score_term(s)) * dtype_scale(s);
}

MemoryItem static_item(const char* name, double params, double bytes, double shards) {
  const double per_rank = params * bytes / shards;
  std::string detail = fmt::format("{:.4g} parameters x {} B", params, bytes);
  if (shards > 1) detail += fmt::format(" / {} (ZeRO shards)", shards);
  return {name, per_rank, detail};
}

}  // namespace

double MemoryLedger::static_bytes() const {
  double total = 0;
  for (const auto& item : static_items) total += item.bytes;
  return total;
}

double MemoryLedger::peak_bytes() const {
  return static_bytes() + activations.bytes + largest_transient.bytes;
}

double layer_activation_bytes(const config::Scenario& s) {
  if (s.training().recompute() == config::Training::FULL) {
    const double t = s.layout().sequence_parallel() ? s.layout().tp() : 1;
    return 2 * sbh(s) / t * dtype_scale(s);
  }
  return layer_bytes_without_recompute(s);
}

int in_flight_chunk_passes(const PassOrder& order) {
  int outstanding = 0;
  int peak = 0;
  for (const PipelinePass& p : order) {
    if (p.kind == PassKind::kForward) peak = std::max(peak, ++outstanding);
    if (p.kind == PassKind::kBackward || p.kind == PassKind::kBackwardInput) --outstanding;
  }
  return peak;
}

MemoryLedger memory_ledger(const config::Scenario& s, RankId rank) {
  const TransformerModel model(s.model());
  const ParallelLayout layout = ParallelLayout::from_config(s.layout());
  const PipelineMap map = pipeline_map(s);
  const RankCoords c = layout.coords(rank);
  MemoryLedger ledger;
  ledger.rank = rank;
  ledger.capacity_bytes = s.hardware().gpu().hbm_bytes();

  const double params = params_on_rank(model, layout, map, rank);
  const int zero = s.training().zero_stage();
  const double dp = static_cast<double>(layout.dp_cp_group(rank).size());
  const double weight_bytes = bytes_per_element(to_data_type(s.training().dtype()));
  const double grad_bytes = bytes_per_element(to_data_type(s.training().grad_reduce_dtype()));
  ledger.static_items.push_back(static_item("weights", params, weight_bytes, zero >= 3 ? dp : 1));
  ledger.static_items.push_back(static_item("gradients", params, grad_bytes, zero >= 2 ? dp : 1));
  ledger.static_items.push_back(
      static_item("optimizer states", params, kOptimizerBytesPerParam, zero >= 1 ? dp : 1));

  const int layers_per_chunk = map.layers({c.pp, 0}).count;
  const int in_flight = in_flight_chunk_passes(pipeline_orders(s)[c.pp]);
  const double per_layer = layer_activation_bytes(s);
  ledger.activations = {
      "activations", per_layer * layers_per_chunk * in_flight,
      fmt::format("{:.4g} B per layer per micro-batch x {} layers per chunk x {} chunk passes in "
                  "flight (from the schedule)",
                  per_layer, layers_per_chunk, in_flight)};

  // The largest single workspace: the logits of the vocabulary-parallel loss where micro-batches
  // leave the model (BF16 logits and their FP32 softmax), or a layer rematerialised by full
  // recompute.
  const double tokens =
      static_cast<double>(s.training().micro_batch_size() * s.training().seq_length());
  MemoryItem transient{"none", 0, ""};
  bool head = false;
  for (int chunk = 0; chunk < map.chunks_per_stage(); ++chunk) head = head || map.ends_route({c.pp, chunk});
  if (head) {
    const double vocab_local = static_cast<double>(model.vocab()) / layout.tp();
    transient = {"lm_head logits [b, s, V/tp] bf16 + fp32 softmax", tokens * vocab_local * (2 + 4),
                 fmt::format("{:.0f} tokens x {:.0f} vocabulary entries x 6 B", tokens, vocab_local)};
  }
  if (s.training().recompute() == config::Training::FULL) {
    const double layer = layer_bytes_without_recompute(s);
    if (layer > transient.bytes) {
      transient = {"one layer's activations rematerialised by full recompute", layer,
                   "the no-recompute per-layer activations of one micro-batch"};
    }
  }
  ledger.largest_transient = transient;
  return ledger;
}

MemoryLedger worst_memory_ledger(const config::Scenario& s) {
  const ParallelLayout layout = ParallelLayout::from_config(s.layout());
  MemoryLedger worst;
  bool first = true;
  for (int stage = 0; stage < layout.pp(); ++stage) {
    MemoryLedger l = memory_ledger(s, layout.rank(RankCoords{0, 0, 0, stage}));
    if (first || l.peak_bytes() > worst.peak_bytes()) {
      worst = std::move(l);
      first = false;
    }
  }
  return worst;
}

}  // namespace racksim
