// A measured row as the measurement floor (analysis/measurement_floor.h) sees it: which rows it
// differs from only in the micro-batch, the TP size or the model's size, and the least time its
// work takes.
#pragma once

#include "analysis/measurement_floor.h"
#include "app/studies/calibrate.h"
#include "config/scenario_loader.h"
#include "workloads/training/training_plan.h"

namespace racksim::app {

// `scenario` is the row's, loaded and validated with its overrides; `plan` it resolved.
analysis::MicroBatchRow floor_row(const MeasuredPoint& point, const config::Scenario& scenario,
                                  const TrainingPlan& plan);

}  // namespace racksim::app
