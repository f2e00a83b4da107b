// Pipeline schedules as per-stage orders of passes. A schedule only orders work; the bubble
// comes out of the simulation, never from a formula.
//
// A pass runs one chunk of layers (see pipeline_map.h) for one micro-batch: a forward, a full
// backward, or, for the zero-bubble schedules, the backward split into its input-gradient part
// (B, on the critical path) and its weight-gradient part (W, which can wait).
#pragma once

#include <vector>

namespace racksim {

enum class PassKind {
  kForward,
  kBackward,        // input and weight gradients together
  kBackwardInput,   // B: gradients with respect to the inputs
  kBackwardWeight,  // W: gradients with respect to the weights
};

struct PipelinePass {
  PassKind kind = PassKind::kForward;
  int micro_batch = 0;
  int local_chunk = 0;
  // DualPipe runs a forward and a backward of two micro-batches at the same time: this pass and
  // the next one overlap (each on its own compute stream).
  bool overlaps_next = false;

  bool operator==(const PipelinePass&) const = default;
};

using PassOrder = std::vector<PipelinePass>;

// GPipe: all forwards, then all backwards (in reverse micro-batch order).
PassOrder gpipe_order(int stage, int stages, int micro_batches);

// 1F1B (PipeDream-flush, Megatron's default): stage s runs min(p - s - 1, m) warm-up forwards,
// then alternates one forward and one backward, then drains the remaining backwards.
PassOrder one_f_one_b_order(int stage, int stages, int micro_batches);

// Megatron's interleaved 1F1B with v chunks per stage (micro_batches a multiple of stages):
// warm-up of (p - s - 1) x 2 + (v - 1) x p chunk-forwards, then one forward and one backward
// alternately; micro-batches go through the chunks in groups of p.
PassOrder interleaved_order(int stage, int stages, int virtual_stages, int micro_batches);

// Megatron-Core's combined 1F1B (training.moe_a2a_overlap) on a 1F1B or interleaved 1F1B order:
// one more warm-up forward, then each steady-state forward paired with the backward after it
// (`overlaps_next`), two different micro-batches; the drain's backwards stay on their own. With
// one stage this is F0, F1 with B0, ..., B(m-1).
PassOrder combined_1f1b_order(const PassOrder& order);

// Estimated durations of a chunk's passes (any unit; FLOPs will do).
struct PassCosts {
  double forward = 1;
  double backward_input = 1;
  double backward_weight = 1;
};

// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR'24): the backward is split into B
// and W. Each stage, whenever it is free, runs a B if its gradient is there, else a forward if
// it holds fewer than p - s micro-batches (1F1B's activation memory), else a pending W. The
// orders come from playing this rule with the passes' estimated costs (with equal costs it is
// the paper's handcrafted ZB-H1). Returns every stage's order.
std::vector<PassOrder> zb_h1_orders(int stages, int micro_batches, const PassCosts& costs = {});

// DualPipe (DeepSeek-V3 technical report, and its reference implementation's eight steps):
// two pipelines in opposite directions, micro-batches [0, m/2) entering at stage 0 and
// [m/2, m) at stage p-1; in the main phase each stage overlaps the forward of one micro-batch
// with the backward of another; the edges use zero-bubble B/W splits. Needs an even number of
// stages and an even micro_batches >= 2 (stages - 1).
PassOrder dualpipe_order(int stage, int stages, int micro_batches);

}  // namespace racksim
