// One training scenario end to end. The scenario is resolved once into a checked plan
// (resolve_training_run: the workload, the cluster, the compute model, the engine's settings,
// power and prices); the run builds the event graph and the cluster from the plan, simulates
// and reports. Nothing after resolve_training_run reads the scenario.
#pragma once

#include "analysis/energy.h"
#include "analysis/pipeline_svg.h"
#include "analysis/report.h"
#include "analysis/run_cost.h"
#include "app/sim_estimate.h"
#include "app/steady_state.h"
#include "config/scenario_loader.h"
#include "proto/scenario.pb.h"
#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/cluster_spec.h"
#include "topologies/faults.h"
#include "workloads/training/training_plan.h"
#include "workloads/training/training_step.h"

namespace racksim::app {

// Everything one training run needs, resolved and checked.
struct TrainingRunPlan {
  TrainingPlan training;       // model, layout, schedule, shapes, memory settings
  topo::ClusterSpec cluster;   // the hardware to build, defaults applied
  topo::Faults faults;         // what-if faults; empty for a healthy cluster
  sim::ComputeModel compute;   // how long a kernel takes
  sim::SimOptions engine;      // fidelity and collectives; the run adds the per-rank fields
  bool fold_replicas = false;  // simulate one data-parallel replica per identical group
  analysis::PowerModel power;  // watts per part, for the step's energy
  analysis::CostModel cost;    // prices, for the step's cost
  // The two shorter steps that stand for this one (sim.steady_state), or nothing; and why not,
  // when that is worth reporting.
  std::optional<SteadyStateWindow> steady_state;
  std::string steady_state_note;
};

// Resolves a loaded, validated scenario. Throws std::invalid_argument naming the field for what
// the builders cannot use.
TrainingRunPlan resolve_training_run(const config::LoadedScenario& loaded);

struct TrainingRun {
  TrainingStep step;
  sim::SimResult result;
  analysis::StepReport report;
};

// Simulates one step of `plan`. Ranks sit on GPUs in order (rank r on GPU r). One simulation per
// process (SimGrid). With a steady-state window, the two shorter steps run in child processes and
// the step is extended from them when the check finds a period (report.steady_state); else
// every micro-batch is replayed here. `feedback`: progress while it runs, and the note that FULL
// fidelity would take long (app/sim_estimate.h).
TrainingRun run_training(const TrainingRunPlan& plan, const SimFeedback& feedback = {});

// How pipeline.svg draws `run`: titled by the scenario, ranks grouped by pipeline stage, the
// critical path marked. The options point into `run`.
analysis::PipelineSvgOptions pipeline_svg_options(const TrainingRun& run);

}  // namespace racksim::app
