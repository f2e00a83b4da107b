// One training scenario end to end: the event graph, the cluster, the simulation, the report.
#pragma once

#include "analysis/pipeline_svg.h"
#include "analysis/report.h"
#include "app/sim_estimate.h"
#include "proto/scenario.pb.h"
#include "sim/engine.h"
#include "workloads/training/training_step.h"

namespace racksim::app {

struct TrainingRun {
  TrainingStep step;
  sim::SimResult result;
  analysis::StepReport report;
};

// Simulates one step of a resolved, validated scenario. Ranks sit on GPUs in order (rank r on
// GPU r). One simulation per process (SimGrid). `feedback`: progress while it runs, and the
// note that FULL fidelity would take long (app/sim_estimate.h).
TrainingRun run_training(const config::Scenario& scenario, const SimFeedback& feedback = {});

// How pipeline.svg draws `run`: titled by the scenario, ranks grouped by pipeline stage, the
// critical path marked. The options point into `run`.
analysis::PipelineSvgOptions pipeline_svg_options(const TrainingRun& run);

}  // namespace racksim::app
