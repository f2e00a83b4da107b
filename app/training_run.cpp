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
#include "sim/compute_model.h"
#include "topologies/topology_graph.h"

namespace racksim::app {

namespace {
constexpr size_t kTopLinks = 10;  // busiest links in the report

// The step's energy from its timeline, and its cost at the hardware's prices.
void add_energy_and_cost(const config::Hardware& hardware, const topo::Topology& topology,
                         TrainingRun* run) {
  analysis::StepReport& r = run->report;
  const auto power = analysis::PowerModel::from_hardware(hardware);
  const auto gpu_seconds = analysis::gpu_state_seconds(run->step.graph, run->result, r.step_time_s,
                                                       static_cast<int>(topology.num_gpus()));
  r.energy = analysis::step_energy(power, analysis::cluster_parts(topology, power), gpu_seconds,
                                   r.step_time_s, r.tokens_per_step);
  r.cost_model = analysis::CostModel::from_hardware(hardware);
  r.step_cost = analysis::run_cost(r.cost_model, static_cast<int>(topology.num_gpus()),
                                   r.step_time_s, r.energy.facility_j(), r.tokens_per_step);
}
}  // namespace

TrainingRun run_training(const config::Scenario& scenario, const SimFeedback& feedback) {
  const topo::Faults faults = topo::resolve_faults(scenario.faults());
  // The baseline first: its child must start before this process creates a SimGrid engine.
  const analysis::BaselineStep baseline =
      faults.empty() ? analysis::BaselineStep{} : simulate_without_faults(scenario);
  const TrainingPlan plan = resolve_training_plan(scenario);
  const std::vector<bool> simulated =
      scenario.sim().fold_replicas() ? config::folded_ranks(plan.layout) : std::vector<bool>{};
  const size_t simulated_ranks =
      simulated.empty() ? static_cast<size_t>(plan.cluster.gpus())
                        : static_cast<size_t>(std::count(simulated.begin(), simulated.end(), true));
  check_graph_fits(plan, simulated_ranks, machine_memory_bytes());
  // Every simulated rank has at least its compute stream's actor; checked again, exactly,
  // before the replay starts them.
  sim::check_actor_count(simulated_ranks, fmt::format("simulating {} ranks", simulated_ranks));
  set_interrupt_activity("simulating the training step");
  StepGraphOptions graph_options;
  graph_options.merge_ring_hops = sim::merges_ring_hops(scenario.sim().fidelity());
  graph_options.only_ranks = simulated;
  TrainingRun run{build_training_step(plan, graph_options), {}, {}};
  const topo::Topology topology = topo::build_cluster(scenario.hardware(), faults);
  std::vector<uint32_t> rank_to_gpu(run.step.graph.num_ranks());
  std::iota(rank_to_gpu.begin(), rank_to_gpu.end(), 0u);
  sim::SimOptions options;
  options.fidelity = scenario.sim().fidelity();
  options.collective_base_latency_s = scenario.hardware().collectives().base_latency_s();
  options.algorithm = sim::to_algorithm(scenario.hardware().collectives().algorithm());
  options.simulated_ranks = simulated;
  if (!faults.empty()) {  // rank r on GPU r: per-GPU factors are per-rank factors
    options.gpu_time_factor = faults.gpu_time_factors(topology.num_gpus());
    options.host_time_factor =
        faults.host_time_factors(topology.num_gpus(), topology.gpus_per_node);
  }
  options.progress = feedback.progress;
  if (feedback.note) {
    const FullCostEstimate cost = estimate_full_cost(
        run.step.graph, engine_flows(run.step.graph, topology, rank_to_gpu, options.algorithm));
    const std::string hint = fidelity_hint(cost, options.fidelity, "--set sim.fidelity=ANALYTIC");
    if (!hint.empty()) feedback.note(hint);
  }
  run.result = sim::simulate(run.step.graph, topology, rank_to_gpu,
                             sim::ComputeModel::from_hardware(scenario.hardware()), options);
  run.report = analysis::make_step_report(plan, run.step, run.result);
  run.report.links =
      analysis::link_usage(topology, rank_to_gpu, run.result.traffic,
                           run.result.traffic_resolution_s, run.report.step_time_s, kTopLinks);
  add_energy_and_cost(scenario.hardware(), topology, &run);
  if (!faults.empty()) {
    run.report.faults = analysis::fault_report(
        faults, topology.gpus_per_node, topology.spec.scale_up.domain_size, run.step.graph,
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
