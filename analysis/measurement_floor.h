// How close any step-time model of racksim's kind can come to a set of measured step times.
//
// Rows that differ only in the micro-batch (one layout, one global batch) constrain each other.
// A step of m micro-batches over p pipeline stages (GPipe, 1F1B, interleaved, ZB-H1) takes
//
//   step = m u + v + c,
//
// where u is the bottleneck stage's time for one micro-batch (forward and backward, with its
// tensor-parallel collectives and its sends), v the other stages' times that fill and drain the
// pipeline (0 <= v <= (p - 1) u; v = 0 without stages) and c the step's own costs: gradient
// reduction, optimizer, per-step overheads. A larger micro-batch is more work in fewer, larger
// kernels and collectives, so u and v do not fall with it and do not grow faster than it (their
// per-sequence time does not rise: fuller waves of GEMM tiles, fewer launches, fewer collective
// latencies, the same bytes per sequence), and c does not grow (a gradient reduction overlapped
// with the last backward hides more behind a longer one). racksim's predictions have these
// properties (tests/cli/cli_validation_test.cpp checks them on vTrain's rows). Measured rows that
// no u, v, c of that kind reproduce contradict every such model: the closest it can come is a
// floor under any model's mean error, and the rows that set it point to effects outside the
// step's kernels and collectives (memory pressure, a slow node, run-to-run spread). Without
// pipeline stages the bound is the one its first version drew: the step does not rise with the
// micro-batch.
//
// Layouts that differ only in the tensor-parallel size constrain each other too. Take two with the
// same model, global batch, GPUs, pipeline stages and micro-batch, one with r times the other's
// TP (and 1/r its DP), both inside one scale-up domain. The smaller TP's rank does r times the
// larger's GEMM work per micro-batch in GEMMs r times as wide (tiles r times as many, waves at
// most r times as many), the same work in kernels TP does not split, and its TP collectives move
// the same bytes over fewer ranks of the same switch (on vTrain's A100 nodes a 64 MiB all-reduce
// takes 0.40 ms on 2 GPUs, 0.54 on 4, 0.58 on 8); its pipeline sends carry at most r times the
// bytes, its optimizer updates r times the parameters, and its gradient reduction sends the
// same bytes through each node's NICs. So its u, v and c are at most r times the larger TP's
// (it has 1/r as many micro-batches): a TP2 step slower than its TP4 sibling's work and bubble
// allow is a measurement no such model gives.
//
// Models that differ only in their size constrain each other as well. Take two layouts with the
// same everything (GPUs, TP, PP, DP, global batch, sequence, heads) but the model's width (hidden
// and FFN sizes, both no smaller) or depth (more layers): the larger runs the same kernels and
// collectives, each on no fewer elements (GEMMs at least as wide and as deep, attention over a
// head dimension at least as large, the same sequence, all-reduces of no fewer bytes), or more of
// them. So its u, v and c are no smaller than the smaller model's: a smaller model measured
// slower than a larger one is a measurement no such model gives. (Widths off the Tensor Cores'
// grain would break this: narrow loads make a GEMM slower than a wider aligned one, so such rows
// are not linked.)
//
// One bound ties the terms to the hardware: m u, the bottleneck stage's micro-batches, takes at
// least the step's FLOPs per GPU at the GPU's peak (a stage does no less than the average).
// Without it the step's own costs c could take up any share of a step.
//
// One bound ties the step's own costs to the framework, where it says how it reduces the
// gradients. When they are reduced after the last backward (no bucket overlaps it: DeepSpeed's
// engine, Megatron without --overlap-grad-reduce) and there are no pipeline stages (whose drain
// can hide a later stage's reduction, by more with a longer micro-batch), c is the reduction
// and the optimizer, the same at every micro-batch: doubling the micro-batch then halves
// m and leaves c, so the step falls at most to half. That holds where the micro-batches run the
// same kernels; where a framework picks another kernel for the larger one (Megatron's fused
// softmax takes a micro-batch x heads per rank that is a multiple of 4), the looser bound stays.
// The floor drawn with it (`FloorOptions::framework_step_costs`) is the closest a model of the
// named framework can come; the one without it, the closest any framework can.
//
// What the bounds assume that a GPU may break: a GEMM's last partial wave can make a larger
// micro-batch's time per sequence rise by up to one wave in its number of waves; a library's
// heuristics can pick a slower kernel for a smaller shape.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace racksim::analysis {

struct MicroBatchRow {
  std::string family;  // rows with the same family differ only in the micro-batch
  double micro_batch = 0;
  int stages = 1;            // pipeline stages
  double micro_batches = 0;  // micro-batches per step per pipeline (global / (dp x micro-batch))
  bool bounded = true;       // a schedule the step formula holds for (not DualPipe)
  double measured_s = 0;
  // Rows with the same non-empty `siblings` differ at most in the micro-batch, the TP size and
  // with it the DP size; a row's TP is linked to another's when both are inside one scale-up
  // domain and one divides the other.
  std::string siblings;
  int tp = 1;
  bool tp_in_domain = false;
  // The step's FLOPs per GPU at the GPU's peak: m u is no less (0: not drawn).
  double least_work_s = 0;
  // Rows with the same non-empty `model_siblings` differ at most in the micro-batch and the
  // model's size below; a row is linked to another whose size is no smaller in every field and
  // larger in width or in depth alone.
  std::string model_siblings;
  double hidden = 0, ffn = 0, layers = 0;
  // The framework reduces the gradients after the last backward and the layout has no pipeline
  // stages: c is the same at every micro-batch of the family whose `kernels` are the same.
  bool step_costs_fixed = false;
  std::string kernels;  // what tells one micro-batch's kernels from another's (their names)
};

struct FloorOptions {
  // Hold c fixed where a row says its framework does (`MicroBatchRow::step_costs_fixed`).
  bool framework_step_costs = false;
};

struct MicroBatchFloor {
  // Per row: the closest step time a model of that kind can give it (the measured time where
  // the row is consistent with its family).
  std::vector<double> closest_s;
  double mean_abs_relative = 0;  // mean |closest / measured - 1| over every row
  size_t families = 0;           // bounded families of two rows or more
  // Of those, the ones no such model matches (repeated measurements of one micro-batch that
  // differ are among them).
  size_t families_broken = 0;
  // Pairs of families that differ only in the TP size, and those whose rows no such model gives
  // together though each family alone is matched as closely as above.
  size_t sibling_pairs = 0;
  size_t sibling_pairs_broken = 0;
  // The broken pairs: a row of the smaller TP's family, a row of the larger's.
  std::vector<std::pair<size_t, size_t>> broken_pair_rows;
  // Pairs of families that differ only in the model's width or depth, those broken, and their
  // rows: the smaller model's, the larger's.
  size_t model_pairs = 0;
  size_t model_pairs_broken = 0;
  std::vector<std::pair<size_t, size_t>> broken_model_rows;
  // With FloorOptions::framework_step_costs: the families whose c was held fixed between two
  // micro-batches or more.
  size_t fixed_cost_families = 0;
};

// The closest step times minimise the sum of |closest / measured - 1| within each family and its
// TP and model siblings: a linear program over u, v and c per family and micro-batch
// (analysis/linear_program.h), exact.
MicroBatchFloor micro_batch_floor(const std::vector<MicroBatchRow>& rows,
                                  FloorOptions options = {});

}  // namespace racksim::analysis
