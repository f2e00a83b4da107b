// How close any step-time model of racksim's kind can come to a set of measured step times.
//
// Without pipeline stages, a larger micro-batch does the same work per step in fewer, larger
// kernels and collectives: fuller waves of GEMM tiles, fewer launches, fewer collective
// latencies, the same bytes. So the step takes no longer (racksim's predictions have this
// property; tests/cli/cli_validation_test.cpp pins it on vTrain's rows). Measured rows that differ
// only in the micro-batch and take longer with a larger one contradict every such model: the
// closest it can come is the nearest step times that do not rise with the micro-batch. Their
// mean error is a floor under any model's, and the rows that set it point to effects outside the
// step (memory pressure, a slow node, run-to-run spread). With pipeline stages a larger
// micro-batch also lengthens the bubble, so no such bound is drawn there.
#pragma once

#include <string>
#include <vector>

namespace racksim::analysis {

struct MicroBatchRow {
  std::string family;  // rows with the same family differ only in the micro-batch
  double micro_batch = 0;
  bool pipelined = false;  // more than one pipeline stage: not bounded
  double measured_s = 0;
};

struct MicroBatchFloor {
  // Per row: the closest step time a model that does not slow down with the micro-batch can
  // give it (the measured time where the row is consistent with its family).
  std::vector<double> closest_s;
  double mean_abs_relative = 0;  // mean |closest / measured - 1| over every row
  size_t families = 0;           // unpipelined families of two rows or more
  // Of those, the ones no such model matches: slower with a larger micro-batch, or repeated
  // measurements of one micro-batch that differ.
  size_t families_broken = 0;
};

// The closest step times minimise the sum of |closest / measured - 1| within each family
// (weighted L1 isotonic regression; the optimum takes measured values, found by dynamic
// programming over them).
MicroBatchFloor micro_batch_floor(const std::vector<MicroBatchRow>& rows);

}  // namespace racksim::analysis
