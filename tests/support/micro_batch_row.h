// A row of the measurement floor (analysis/measurement_floor.h) that only its micro-batch
// family describes: no TP or model siblings, a schedule the step formula holds for.
#pragma once

#include <string>

#include "analysis/measurement_floor.h"

namespace racksim::testing {

// `micro_batches`: per step per pipeline (global batch / (DP x micro-batch)).
inline analysis::MicroBatchRow micro_batch_row(const std::string& family, double micro_batch,
                                               int stages, double micro_batches,
                                               double measured_s) {
  analysis::MicroBatchRow row;
  row.family = family;
  row.micro_batch = micro_batch;
  row.stages = stages;
  row.micro_batches = micro_batches;
  row.measured_s = measured_s;
  return row;
}

}  // namespace racksim::testing
