#include "app/inference_run.h"

#include <algorithm>
#include <numeric>
#include <type_traits>

#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/topology_graph.h"
#include "workloads/inference/inference_ledger.h"
#include "workloads/training/training_step.h"

namespace racksim::app {

namespace {

constexpr double kSecondsPerHour = 3600;
constexpr double kMillion = 1e6;

double ep_time_of_rank(const EventGraph& graph, const sim::SimResult& result, RankId rank) {
  double total = 0;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.rank == rank && op.kind == OpKind::kCollective && op.dim == CommDim::kEp) {
      total += result.timing[id].end_s - result.timing[id].start_s;
    }
  }
  return total;
}

// Reading every stage's largest weights once, stage after stage: the step's floor. Weights do
// not depend on the phase, so any step of the plan gives the same figure.
double stage_weight_read_floor_s(const InferenceStepInfo& info, double hbm_bytes_per_s) {
  double floor_s = 0;
  for (double bytes : info.stage_weight_bytes)
    floor_s += weight_read_floor_s(bytes, hbm_bytes_per_s);
  return floor_s;
}

double price_per_gpu_s(const InferenceRunPlan& plan) {
  return plan.gpu_hour_price / kSecondsPerHour;
}

}  // namespace

InferenceRunPlan resolve_inference_run(const config::LoadedScenario& loaded) {
  const config::Scenario& scenario = loaded.scenario;
  const config::Hardware& hardware = scenario.hardware();
  sim::SimOptions engine = sim::sim_options(hardware, loaded.measured_collectives);
  engine.fidelity = scenario.sim().fidelity();
  return InferenceRunPlan{resolve_inference_plan(scenario), topo::cluster_spec(hardware),
                          sim::ComputeModel::from_hardware(hardware), std::move(engine),
                          scenario.inference().gpu_hour_price()};
}

InferenceAlgebra inference_algebra(const InferenceRunPlan& plan) {
  const InferenceStep step = build_inference_step(plan.workload, plan.workload.decode);
  const auto& info = step.info;
  const double hbm = plan.hbm_bytes_per_s();
  const double flops = plan.peak_flops_per_gpu();
  InferenceAlgebra a;
  a.gpus = plan.gpus();
  a.total_params = info.total_params;
  a.active_params = info.active_params;
  a.weight_bytes = info.total_params * info.weight_bytes_per_param;
  a.weight_read_floor_s = stage_weight_read_floor_s(info, hbm);
  a.compute_time_per_token_s = compute_time_s(1, info.active_params, flops * a.gpus);
  a.break_even_batch = break_even_batch(flops, hbm, info.total_params, info.active_params,
                                        info.weight_bytes_per_param);
  a.price_per_gpu_s = price_per_gpu_s(plan);
  a.cost_floor_per_mtok =
      compute_cost_floor_per_token(info.active_params, flops, a.price_per_gpu_s) * kMillion;
  a.kv_bytes_per_sequence = info.kv_bytes_per_sequence;
  const auto ctx = std::max<int64_t>(1, plan.workload.decode.context);
  a.kv_bytes_per_token = info.kv_bytes_per_sequence / static_cast<double>(ctx);
  return a;
}

InferencePoint run_inference(const InferenceRunPlan& plan, InferencePhase phase) {
  const InferenceShape& shape = plan.workload.shape(phase);
  const InferenceStep step = build_inference_step(plan.workload, shape);
  const topo::Topology topology = topo::build_cluster(plan.cluster);
  std::vector<uint32_t> rank_to_gpu(step.graph.num_ranks());
  std::iota(rank_to_gpu.begin(), rank_to_gpu.end(), 0u);
  const sim::SimResult result =
      sim::simulate(step.graph, topology, rank_to_gpu, plan.compute, plan.engine);
  InferencePoint p;
  p.phase = phase == InferencePhase::kDecode ? "decode" : "prefill";
  p.batch = shape.batch;
  p.context = phase == InferencePhase::kDecode ? shape.context : shape.prompt;
  p.gpus = plan.gpus();
  p.domain_size = topology.spec.scale_up.domain_size;
  p.step_time_s = result.makespan_s;
  p.tokens_per_s = step.info.tokens / result.makespan_s;
  p.latency_per_token_s = result.makespan_s;
  p.cost_per_mtok =
      p.gpus * price_per_gpu_s(plan) * result.makespan_s / step.info.tokens * kMillion;
  // From this step's own info: the closed-form algebra would build a second step for it.
  p.weight_floor_s = stage_weight_read_floor_s(step.info, plan.hbm_bytes_per_s());
  p.compute_floor_s =
      compute_time_s(step.info.tokens, step.info.active_params, plan.peak_flops_per_gpu() * p.gpus);
  p.max_weight_bytes =
      *std::max_element(step.info.weight_bytes.begin(), step.info.weight_bytes.end());
  p.max_kv_bytes = *std::max_element(step.info.kv_bytes.begin(), step.info.kv_bytes.end());
  p.ep_time_s = ep_time_of_rank(step.graph, result, 0);
  for (const auto& pair : result.traffic) {
    const bool inside = topology.scale_up_domain_of_gpu(rank_to_gpu[pair.source]) ==
                        topology.scale_up_domain_of_gpu(rank_to_gpu[pair.destination]);
    (inside ? p.scale_up_bytes : p.scale_out_bytes) += pair.bytes;
  }
  const double network = p.scale_up_bytes + p.scale_out_bytes;
  p.crossing_share = network > 0 ? p.scale_out_bytes / network : 0;
  return p;
}

namespace {

// Every field of a point with its JSON key, in the order the JSON lists them: the one list
// both directions use (a point travels from a child process to its study as JSON).
template <typename Point, typename Visit>
void visit_fields(Point& p, Visit&& visit) {
  visit("phase", p.phase);
  visit("batch", p.batch);
  visit("context", p.context);
  visit("gpus", p.gpus);
  visit("domain_size", p.domain_size);
  visit("step_time_s", p.step_time_s);
  visit("tokens_per_s", p.tokens_per_s);
  visit("latency_per_token_s", p.latency_per_token_s);
  visit("cost_per_mtok", p.cost_per_mtok);
  visit("weight_floor_s", p.weight_floor_s);
  visit("compute_floor_s", p.compute_floor_s);
  visit("max_weight_bytes", p.max_weight_bytes);
  visit("max_kv_bytes", p.max_kv_bytes);
  visit("ep_time_s", p.ep_time_s);
  visit("scale_up_bytes", p.scale_up_bytes);
  visit("scale_out_bytes", p.scale_out_bytes);
  visit("crossing_share", p.crossing_share);
}

}  // namespace

nlohmann::ordered_json to_json(const InferencePoint& p) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  visit_fields(p, [&](const char* key, const auto& value) { j[key] = value; });
  return j;
}

InferencePoint inference_point_from_json(const nlohmann::json& j) {
  InferencePoint p;
  visit_fields(p, [&](const char* key, auto& value) {
    value = j.at(key).get<std::decay_t<decltype(value)>>();
  });
  return p;
}

nlohmann::ordered_json to_json(const InferenceAlgebra& a) {
  return {{"gpus", a.gpus},
          {"total_params", a.total_params},
          {"active_params", a.active_params},
          {"weight_bytes", a.weight_bytes},
          {"weight_read_floor_s", a.weight_read_floor_s},
          {"compute_time_per_token_s", a.compute_time_per_token_s},
          {"break_even_batch", a.break_even_batch},
          {"price_per_gpu_s", a.price_per_gpu_s},
          {"cost_floor_per_mtok", a.cost_floor_per_mtok},
          {"kv_bytes_per_sequence", a.kv_bytes_per_sequence},
          {"kv_bytes_per_token", a.kv_bytes_per_token}};
}

}  // namespace racksim::app
