// training.defer_embedding_wgrad (Megatron-Core's defer_embedding_wgrad_compute): the output
// layer's weight-gradient GEMMs of the first micro-batches run in a drain after the last stage's
// last backward pass. What the graph and the memory ledger both take from that, resolved once.
#pragma once

#include <vector>

#include "workloads/model/layer_steps.h"
#include "workloads/training/training_plan.h"

namespace racksim {

// The head block split for deferral. The output layer's steps are its own and its calls on the
// multi-token prediction modules' hidden states: Megatron-Core defers the layer's weight
// gradient whoever called it, and none of the modules' other weight gradients.
struct HeadDeferral {
  std::vector<LayerStep> backward;      // a deferring pass: every input gradient, and the
                                        // modules' weight gradients but the output layer's
  std::vector<LayerStep> output_wgrad;  // the drain's, per deferred micro-batch
  // The output layer's sequence-parallel inputs (its own and the modules') as gathered over TP
  // for one micro-batch; 0 without sequence parallelism.
  double input_gather_bytes = 0;
};

HeadDeferral head_deferral(const BlockSteps& head);

// How many micro-batches a last-stage rank defers: all of them with no limit (0), otherwise the
// whole micro-batches the limit holds, counted in output-layer calls (one a micro-batch and one
// per multi-token prediction module), and at least the first (Megatron-Core would defer part of
// it). 0 without training.defer_embedding_wgrad.
int deferred_head_micro_batches(const TrainingPlan& p);

}  // namespace racksim
