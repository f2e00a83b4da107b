#include "app/training_run.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "analysis/link_usage.h"
#include "app/fault_baseline.h"
#include "app/graph_memory.h"
#include "common/interrupt.h"
#include "config/symmetry_fold.h"
#include "sim/actor_limit.h"
#include "topologies/topology_graph.h"

namespace racksim::app {

namespace {
constexpr size_t kTopLinks = 10;  // busiest links in the report

// The step's energy from its timeline, and its cost at the plan's prices.
void add_energy_and_cost(const TrainingRunPlan& plan, const topo::Topology& topology,
                         TrainingRun* run) {
  analysis::StepReport& r = run->report;
  const auto gpu_seconds = analysis::gpu_state_seconds(run->step.graph, run->result, r.step_time_s,
                                                       static_cast<int>(topology.num_gpus()));
  r.energy = analysis::step_energy(plan.power, analysis::cluster_parts(topology, plan.power),
                                   gpu_seconds, r.step_time_s, r.tokens_per_step);
  r.cost_model = plan.cost;
  r.step_cost = analysis::run_cost(r.cost_model, static_cast<int>(topology.num_gpus()),
                                   r.step_time_s, r.energy.facility_j(), r.tokens_per_step);
}

// The ranks the graph holds: all (empty) or, folding replicas, one per identical group. Checks
// that their graph and actors fit this machine before anything is built.
std::vector<bool> simulated_ranks(const TrainingRunPlan& plan) {
  const std::vector<bool> simulated =
      plan.fold_replicas ? config::folded_ranks(plan.training.layout) : std::vector<bool>{};
  const size_t count =
      simulated.empty() ? static_cast<size_t>(plan.training.cluster.gpus())
                        : static_cast<size_t>(std::count(simulated.begin(), simulated.end(), true));
  check_graph_fits(plan.training, count, machine_memory_bytes());
  // Every simulated rank has at least its compute stream's actor; checked again, exactly,
  // before the replay starts them.
  sim::check_actor_count(count, fmt::format("simulating {} ranks", count));
  return simulated;
}

// The engine's options for this run: the plan's, with the folded ranks, the faults' per-rank
// factors (rank r on GPU r) and the caller's progress.
sim::SimOptions engine_options(const TrainingRunPlan& plan, const topo::Topology& topology,
                               std::vector<bool> simulated, const SimFeedback& feedback) {
  sim::SimOptions options = plan.engine;
  options.simulated_ranks = std::move(simulated);
  if (!plan.faults.empty()) {
    options.gpu_time_factor = plan.faults.gpu_time_factors(topology.num_gpus());
    options.host_time_factor =
        plan.faults.host_time_factors(topology.num_gpus(), topology.gpus_per_node);
  }
  options.progress = feedback.progress;
  return options;
}

}  // namespace

TrainingRunPlan resolve_training_run(const config::Scenario& scenario) {
  const config::Hardware& hardware = scenario.hardware();
  sim::SimOptions engine = sim::sim_options(hardware);
  engine.fidelity = scenario.sim().fidelity();
  // Braced: the members are resolved in the order they are declared.
  return TrainingRunPlan{resolve_training_plan(scenario),
                         topo::cluster_spec(hardware),
                         topo::resolve_faults(scenario.faults()),
                         sim::ComputeModel::from_hardware(hardware),
                         std::move(engine),
                         scenario.sim().fold_replicas(),
                         analysis::PowerModel::from_hardware(hardware),
                         analysis::CostModel::from_hardware(hardware)};
}

TrainingRun run_training(const TrainingRunPlan& plan, const SimFeedback& feedback) {
  // The baseline first: its child must start before this process creates a SimGrid engine.
  const analysis::BaselineStep baseline =
      plan.faults.empty() ? analysis::BaselineStep{} : simulate_without_faults(plan);
  std::vector<bool> simulated = simulated_ranks(plan);
  set_interrupt_activity("simulating the training step");
  StepGraphOptions graph_options;
  graph_options.merge_ring_hops = sim::merges_ring_hops(plan.engine.fidelity);
  graph_options.only_ranks = simulated;
  TrainingRun run{build_training_step(plan.training, graph_options), {}, {}};
  const topo::Topology topology = topo::build_cluster(plan.cluster, plan.faults);
  std::vector<uint32_t> rank_to_gpu(run.step.graph.num_ranks());
  std::iota(rank_to_gpu.begin(), rank_to_gpu.end(), 0u);
  const sim::SimOptions options = engine_options(plan, topology, std::move(simulated), feedback);
  if (feedback.note) {
    const FullCostEstimate cost = estimate_full_cost(
        run.step.graph, engine_flows(run.step.graph, topology, rank_to_gpu, options.algorithm));
    const std::string hint = fidelity_hint(cost, options.fidelity, "--set sim.fidelity=ANALYTIC");
    if (!hint.empty()) feedback.note(hint);
  }
  run.result = sim::simulate(run.step.graph, topology, rank_to_gpu, plan.compute, options);
  run.report = analysis::make_step_report(plan.training, run.step, run.result);
  run.report.links =
      analysis::link_usage(topology, rank_to_gpu, run.result.traffic,
                           run.result.traffic_resolution_s, run.report.step_time_s, kTopLinks);
  add_energy_and_cost(plan, topology, &run);
  if (!plan.faults.empty()) {
    run.report.faults = analysis::fault_report(
        plan.faults, topology.gpus_per_node, topology.spec.scale_up.domain_size, run.step.graph,
        run.report.critical_path, run.report.step_time_s, baseline);
  }
  return run;
}

analysis::PipelineSvgOptions pipeline_svg_options(const TrainingRun& run) {
  analysis::PipelineSvgOptions options;
  options.title = fmt::format("{}: step {:.4g} s, pipeline bubble and critical path",
                              run.report.scenario.empty() ? "racksim" : run.report.scenario,
                              run.report.step_time_s);
  options.subtitle = run.report.description;
  options.group_of_rank = run.report.stage_of_rank;
  options.group_name = "stage";
  options.critical_path = &run.report.critical_path;
  return options;
}

}  // namespace racksim::app
