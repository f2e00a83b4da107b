#include "workloads/memory_ledger.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/units.h"
#include "workloads/layout.h"
#include "workloads/training_step.h"
#include "workloads/transformer.h"

namespace racksim {

namespace {

// Mixed-precision AdamW: FP32 master weights and the two FP32 moments.
constexpr double kOptimizerBytesPerParam = 12;

int micro_batches(const config::Scenario& s) {
  return static_cast<int>(s.training().global_batch_size() /
                          (s.training().micro_batch_size() * s.layout().dp()));
}

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

double layer_bytes_without_recompute(const config::Scenario& s) {
  const double t = s.layout().tp();
  const double per_element = s.layout().sequence_parallel() ? 34 / t : 10 + 24 / t;
  return sbh(s) * per_element * dtype_scale(s);
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

int in_flight_micro_batches(const config::Scenario& s, int stage) {
  const int m = micro_batches(s);
  if (s.training().schedule() == config::Training::GPIPE) return m;
  return std::min(s.layout().pp() - stage, m);
}

MemoryLedger memory_ledger(const config::Scenario& s, RankId rank) {
  const DenseTransformer model(s.model());
  const ParallelLayout layout = ParallelLayout::from_config(s.layout());
  const RankCoords c = layout.coords(rank);
  MemoryLedger ledger;
  ledger.rank = rank;
  ledger.capacity_bytes = s.hardware().gpu().hbm_bytes();

  const double params = params_on_rank(model, layout, rank);
  const double weight_bytes = bytes_per_element(to_data_type(s.training().dtype()));
  const double grad_bytes = bytes_per_element(to_data_type(s.training().grad_reduce_dtype()));
  ledger.static_items.push_back({"weights", params * weight_bytes,
                                 fmt::format("{:.4g} parameters x {} B", params, weight_bytes)});
  ledger.static_items.push_back({"gradients", params * grad_bytes,
                                 fmt::format("{:.4g} parameters x {} B", params, grad_bytes)});
  ledger.static_items.push_back(
      {"optimizer states", params * kOptimizerBytesPerParam,
       fmt::format("{:.4g} parameters x 12 B (FP32 master, Adam m and v)", params)});

  const int layers = static_cast<int>(model.layers() / layout.pp());
  const int in_flight = in_flight_micro_batches(s, c.pp);
  const double per_layer = layer_activation_bytes(s);
  ledger.activations = {
      "activations", per_layer * layers * in_flight,
      fmt::format("{:.4g} B per layer per micro-batch x {} layers x {} micro-batches in flight",
                  per_layer, layers, in_flight)};

  // The largest single workspace: the logits of the vocabulary-parallel loss on the last stage
  // (BF16 logits and their FP32 softmax), or a layer rematerialised by full recompute.
  const double tokens =
      static_cast<double>(s.training().micro_batch_size() * s.training().seq_length());
  MemoryItem transient{"none", 0, ""};
  if (c.pp == layout.pp() - 1) {
    const double vocab_local = static_cast<double>(model.vocab()) / layout.tp();
    transient = {
        "lm_head logits [b, s, V/tp] bf16 + fp32 softmax", tokens * vocab_local * (2 + 4),
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
