// The largest single allocation of a stage's step on top of the activations it keeps, for the
// memory ledger's peak.
#pragma once

#include "workloads/training/memory_ledger.h"
#include "workloads/training/training_plan.h"

namespace racksim {

// The largest single workspace of pipeline stage `stage`: the logits of the vocabulary-parallel
// loss where micro-batches leave the model (BF16 logits and their FP32 softmax), what full
// recompute rematerialises at once (a layer, or a uniform group of layers), the tensors
// torchtitan's op policy rematerialises for a layer, or an attention kernel's scratch (the CSA
// indexer's unreduced scores).
MemoryItem largest_transient(const TrainingPlan& plan, int stage);

}  // namespace racksim
