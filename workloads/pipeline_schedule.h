// Pipeline schedules as per-stage orders of passes. A schedule only orders work; the bubble
// comes out of the simulation, never from a formula.
#pragma once

#include <vector>

namespace racksim {

enum class PassKind { kForward, kBackward };

struct PipelinePass {
  PassKind kind = PassKind::kForward;
  int micro_batch = 0;
};

// GPipe: all forwards, then all backwards (in reverse micro-batch order: the last forward's
// activations are the freshest).
std::vector<PipelinePass> gpipe_order(int stage, int stages, int micro_batches);

// 1F1B (PipeDream-flush, Megatron's default): stage s runs min(p - s - 1, m) warm-up forwards,
// then alternates one forward and one backward, then drains the remaining backwards.
std::vector<PipelinePass> one_f_one_b_order(int stage, int stages, int micro_batches);

}  // namespace racksim
