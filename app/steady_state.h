// The pipeline's steady state for `racksim run` (analysis/steady_state.h has the algebra and the
// check): which two short steps stand for a step of many micro-batches, and simulating them in
// child processes, since SimGrid runs one simulation per process and the parent must still be
// able to replay every micro-batch when the check finds no period.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "proto/scenario.pb.h"
#include "sim/engine.h"
#include "topologies/topology_graph.h"
#include "workloads/training/training_plan.h"

namespace racksim::app {

// The same step with fewer micro-batches: 3u and 4u, where u is the pipeline depth (at least
// 2; times the virtual stages for interleaved 1F1B, whose warm-up is that long), so each holds
// warm-up, at least u steady micro-batches and cool-down, and each is a legal step of its
// schedule (interleaved 1F1B runs groups of pp).
struct SteadyStateWindow {
  TrainingPlan small;
  TrainingPlan large;
  int unit = 0;  // u
};

// The window for `full` (resolved from `scenario`), or nothing when the step is replayed whole:
// sim.steady_state is off (by default at FULL fidelity), the step has fewer than 14u
// micro-batches (the two shorter steps would cost more than half of it), the schedule is GPipe,
// ZB-H1 or DualPipe (their micro-batches do not end one period apart, which the check needs) or the
// scenario has faults. `why_not` receives the reason worth reporting (empty for the first two).
std::optional<SteadyStateWindow> steady_state_window(const config::Scenario& scenario,
                                                     const TrainingPlan& full, bool has_faults,
                                                     std::string* why_not);

// Simulates `small` and `large` on `topology` in two child processes at once and returns their
// results (in that order). `options.progress` is not called. Throws std::runtime_error with the
// child's error when one fails.
std::array<sim::SimResult, 2> simulate_in_children(const EventGraph& small, const EventGraph& large,
                                                   const topo::Topology& topology,
                                                   const std::vector<uint32_t>& rank_to_gpu,
                                                   const sim::ComputeModel& compute,
                                                   sim::SimOptions options);

}  // namespace racksim::app
