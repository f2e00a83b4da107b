#include "app/training_run.h"

#include <numeric>

#include "sim/compute_model.h"
#include "topologies/topology_graph.h"

namespace racksim::app {

TrainingRun run_training(const config::Scenario& scenario) {
  TrainingRun run{build_training_step(scenario), {}, {}};
  const topo::Topology topology = topo::build_cluster(scenario.hardware());
  std::vector<uint32_t> rank_to_gpu(run.step.graph.num_ranks());
  std::iota(rank_to_gpu.begin(), rank_to_gpu.end(), 0u);
  sim::SimOptions options;
  options.fidelity = scenario.sim().fidelity();
  options.collective_base_latency_s = scenario.hardware().collectives().base_latency_s();
  run.result = sim::simulate(run.step.graph, topology, rank_to_gpu,
                             sim::ComputeModel::from_hardware(scenario.hardware()), options);
  run.report = analysis::make_step_report(scenario, run.step, run.result);
  return run;
}

}  // namespace racksim::app
