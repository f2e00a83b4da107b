// The baseline of a step with what-if faults: the same scenario simulated without them, in a
// forked child process (SimGrid runs one simulation per process; the child starts before the
// parent creates its own engine).
#pragma once

#include "analysis/fault_report.h"
#include "app/training_run.h"

namespace racksim::app {

// Simulates `plan` without its faults. Throws std::runtime_error when the child fails. Call
// before any simulation in this process.
analysis::BaselineStep simulate_without_faults(const TrainingRunPlan& plan);

}  // namespace racksim::app
