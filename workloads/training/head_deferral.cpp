#include "workloads/training/head_deferral.h"

#include <algorithm>

namespace racksim {

HeadDeferral head_deferral(const BlockSteps& head) {
  HeadDeferral d;
  d.backward = head.backward_input;
  for (const LayerStep& step : head.backward_weight) {
    (step.output_layer ? d.output_wgrad : d.backward).push_back(step);
  }
  for (const LayerStep& step : head.forward) {
    // The all-gather that opens the output layer's TP region (its ".in" step).
    if (step.output_layer && step.kind == LayerStep::Kind::kCollective &&
        step.forward == CollectiveKind::kAllGather) {
      d.input_gather_bytes += step.bytes;
    }
  }
  return d;
}

int deferred_head_micro_batches(const TrainingPlan& p) {
  if (!p.training.defer_embedding_wgrad) return 0;
  const int limit = p.training.wgrad_deferral_limit;
  if (limit == 0) return p.micro_batches;
  const int calls = 1 + p.model.mtp_depth();
  return std::min(std::max(1, limit / calls), p.micro_batches);
}

}  // namespace racksim
