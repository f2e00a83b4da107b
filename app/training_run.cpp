#include "app/training_run.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "analysis/link_usage.h"
#include "analysis/steady_state.h"
#include "app/fault_baseline.h"
#include "app/graph_memory.h"
#include "common/interrupt.h"
#include "config/symmetry_fold.h"
#include "sim/actor_limit.h"
#include "topologies/topology_graph.h"

namespace racksim::app {

namespace {
constexpr size_t kTopLinks = 10;  // busiest links in the report

constexpr size_t kTopOperations = 10;  // longest operation groups on the critical path

// The step's energy from the seconds its GPUs spent in each state, and its cost at the plan's
// prices.
void set_energy_and_cost(const TrainingRunPlan& plan, const topo::Topology& topology,
                         const analysis::GpuStateSeconds& gpu_seconds, analysis::StepReport* r) {
  r->energy = analysis::step_energy(plan.power, analysis::cluster_parts(topology, plan.power),
                                    gpu_seconds, r->step_time_s, r->tokens_per_step);
  r->cost_model = plan.cost;
  r->step_cost = analysis::run_cost(r->cost_model, static_cast<int>(topology.num_gpus()),
                                    r->step_time_s, r->energy.facility_j(), r->tokens_per_step);
}

analysis::GpuStateSeconds gpu_seconds(const TrainingStep& step, const sim::SimResult& result,
                                      const topo::Topology& topology) {
  return analysis::gpu_state_seconds(step.graph, result, result.makespan_s,
                                     static_cast<int>(topology.num_gpus()));
}

// The ranks the graph holds: all (empty) or, folding replicas, one per identical group. Checks
// that their graph and actors fit this machine before anything is built.
std::vector<bool> simulated_ranks(const TrainingRunPlan& plan, const TrainingPlan& built) {
  const std::vector<bool> simulated =
      plan.fold_replicas ? config::folded_ranks(plan.training.layout) : std::vector<bool>{};
  const size_t count =
      simulated.empty() ? static_cast<size_t>(plan.training.cluster.gpus())
                        : static_cast<size_t>(std::count(simulated.begin(), simulated.end(), true));
  check_graph_fits(built, count, machine_memory_bytes());
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

// The compute, GPU and collective fields the scenario writes itself, in its file or with --set;
// not those its hardware preset, framework or calibration file gave it (their locations name
// another file), nor the clock ratio, which the validation's configurations are keyed on.
std::vector<std::string> own_model_fields(const config::SourceMap& sources) {
  std::vector<std::string> out;
  for (const char* prefix : {"hardware.compute.", "hardware.gpu.", "hardware.collectives."}) {
    for (const std::string& path : sources.paths_under(prefix)) {
      if (path == "hardware.compute.sustained_clock_ratio" || sources.inherited(path)) continue;
      if (sources.overridden(path) || sources.find(path).file == sources.file()) {
        out.push_back(path);
      }
    }
  }
  return out;
}

}  // namespace

TrainingRunPlan resolve_training_run(const config::LoadedScenario& loaded) {
  const config::Scenario& scenario = loaded.scenario;
  const config::Hardware& hardware = scenario.hardware();
  sim::SimOptions engine = sim::sim_options(hardware, loaded.measured_collectives);
  engine.fidelity = scenario.sim().fidelity();
  // Braced: the members are resolved in the order they are declared.
  TrainingRunPlan plan{resolve_training_plan(scenario),
                       topo::cluster_spec(hardware),
                       topo::resolve_faults(scenario.faults()),
                       sim::ComputeModel::from_hardware(hardware),
                       std::move(engine),
                       scenario.sim().fold_replicas(),
                       analysis::PowerModel::from_hardware(hardware),
                       analysis::CostModel::from_hardware(hardware),
                       std::nullopt,
                       {}};
  plan.steady_state =
      steady_state_window(scenario, plan.training, !plan.faults.empty(), &plan.steady_state_note);
  plan.training.cluster.own_model_fields = own_model_fields(loaded.sources);
  return plan;
}

namespace {

// Every micro-batch replayed in this process.
TrainingRun run_every_micro_batch(const TrainingRunPlan& plan, const SimFeedback& feedback) {
  // The baseline first: its child must start before this process creates a SimGrid engine.
  const analysis::BaselineStep baseline =
      plan.faults.empty() ? analysis::BaselineStep{} : simulate_without_faults(plan);
  std::vector<bool> simulated = simulated_ranks(plan, plan.training);
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
  set_energy_and_cost(plan, topology, gpu_seconds(run.step, run.result, topology), &run.report);
  if (!plan.faults.empty()) {
    run.report.faults = analysis::fault_report(
        plan.faults, topology.gpus_per_node, topology.spec.scale_up.domain_size, run.step.graph,
        run.report.critical_path, run.report.step_time_s, baseline);
  }
  return run;
}

// A step's report with everything the extension needs: every link and path operation (no cut)
// and the GPUs' seconds per state.
analysis::StepReport uncut_report(const TrainingPlan& plan, const TrainingStep& step,
                                  const sim::SimResult& result, const topo::Topology& topology,
                                  const std::vector<uint32_t>& rank_to_gpu) {
  analysis::StepReport r = analysis::make_step_report(plan, step, result, SIZE_MAX);
  r.links = analysis::link_usage(topology, rank_to_gpu, result.traffic, result.traffic_resolution_s,
                                 r.step_time_s, SIZE_MAX);
  r.energy.gpu_seconds = gpu_seconds(step, result, topology);
  return r;
}

// The step extended from the window's two shorter steps, or nothing (with the reason in
// `why_not`) when their micro-batches are not spaced by one period.
std::optional<TrainingRun> run_extended(const TrainingRunPlan& plan, std::string* why_not) {
  const SteadyStateWindow& window = *plan.steady_state;
  std::vector<bool> simulated = simulated_ranks(plan, window.large);
  set_interrupt_activity("simulating the training step's steady state");
  StepGraphOptions graph_options;
  graph_options.merge_ring_hops = sim::merges_ring_hops(plan.engine.fidelity);
  graph_options.only_ranks = simulated;
  const TrainingStep small = build_training_step(window.small, graph_options);
  TrainingRun run{build_training_step(window.large, graph_options), {}, {}};
  const topo::Topology topology = topo::build_cluster(plan.cluster, plan.faults);
  std::vector<uint32_t> rank_to_gpu(run.step.graph.num_ranks());
  std::iota(rank_to_gpu.begin(), rank_to_gpu.end(), 0u);
  auto results =
      simulate_in_children(small.graph, run.step.graph, topology, rank_to_gpu, plan.compute,
                           engine_options(plan, topology, std::move(simulated), {}));
  analysis::SteadyStateUse use;
  use.micro_batches = plan.training.micro_batches;
  use.small_micro_batches = window.small.micro_batches;
  use.large_micro_batches = window.large.micro_batches;
  use.period_s = (results[1].makespan_s - results[0].makespan_s) /
                 (use.large_micro_batches - use.small_micro_batches);
  // Both steps run the same operations at the same times until the shorter one's cool-down
  // (from about micro-batch 3u - pp): when every rank of the longer step is periodic from
  // micro-batch 2u - 1 to 3u - 1, the shorter step's cool-down started in the steady state, and
  // each micro-batch more inserts one period. (Unequal stages need a few micro-batches to settle
  // to the slowest stage's pace: the check sees that.)
  const int u = window.unit;
  use.spacing_error = analysis::micro_batch_spacing_error(run.step.graph, results[1], 2 * u - 1,
                                                          3 * u - 1, use.period_s);
  if (!(use.spacing_error <= analysis::kSpacingTolerance)) {
    *why_not = fmt::format(
        "no period: with {} and {} micro-batches, a rank's micro-batch spacing differs from the "
        "step time each micro-batch adds by {:.3g}%",
        use.small_micro_batches, use.large_micro_batches, 100 * use.spacing_error);
    return std::nullopt;
  }
  use.extended = true;
  analysis::StepReport large =
      uncut_report(window.large, run.step, results[1], topology, rank_to_gpu);
  analysis::StepReport shorter =
      uncut_report(window.small, small, results[0], topology, rank_to_gpu);
  // Both breakdowns describe the rank that ends last in the extended step.
  const RankId rank =
      analysis::extended_critical_rank(small.graph, results[0], run.step.graph, results[1], use);
  large.breakdown = analysis::rank_breakdown(run.step.graph, results[1], rank, large.step_time_s);
  large.critical_stage = window.large.layout.coords(rank).pp;
  shorter.breakdown = analysis::rank_breakdown(small.graph, results[0], rank, shorter.step_time_s);
  run.result = std::move(results[1]);
  run.report =
      analysis::extend_step_report(plan.training, shorter, large, use, kTopLinks, kTopOperations);
  set_energy_and_cost(plan, topology, run.report.energy.gpu_seconds, &run.report);
  return run;
}

}  // namespace

TrainingRun run_training(const TrainingRunPlan& plan, const SimFeedback& feedback) {
  std::string not_extended = plan.steady_state_note;
  std::optional<TrainingRun> run;
  if (plan.steady_state) run = run_extended(plan, &not_extended);
  if (!run) {
    run = run_every_micro_batch(plan, feedback);
    run->report.steady_state.micro_batches = plan.training.micro_batches;
    run->report.steady_state.not_extended = not_extended;
  }
  run->report.kernel_bounds =
      analysis::compute_bounds(run->step.graph, run->report.breakdown.rank, plan.compute);
  return std::move(*run);
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
