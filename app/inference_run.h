// One inference step end to end (decode or prefill of scenario.inference's batch): the scenario
// resolved once into a plan, then the event graph, the cluster, the simulation, and the numbers
// `racksim infer` and `racksim racks` print, beside the lecture's algebra
// (workloads/inference/inference_ledger.h) for the same plan.
#pragma once

#include <nlohmann/json.hpp>

#include "config/scenario_loader.h"
#include "proto/scenario.pb.h"
#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/cluster_spec.h"
#include "workloads/inference/inference_plan.h"
#include "workloads/inference/inference_step.h"

namespace racksim::app {

// Everything one inference run needs, resolved and checked.
struct InferenceRunPlan {
  InferencePlan workload;     // model, layout, dtypes, shapes, expert placement
  topo::ClusterSpec cluster;  // the hardware to build, defaults applied
  sim::ComputeModel compute;  // how long a kernel takes
  sim::SimOptions engine;     // fidelity and collectives
  double gpu_hour_price = 0;  // inference.gpu_hour_price, dollars
  int gpus() const { return cluster.gpus(); }
  // Peak FLOP/s of one GPU at the compute dtype, and its HBM bytes/s: the algebra's floors.
  double peak_flops_per_gpu() const { return compute.peak_flops_per_s(workload.compute_dtype); }
  double hbm_bytes_per_s() const { return compute.hbm_bytes_per_s; }
};

// Resolves a loaded, validated scenario with an inference section.
InferenceRunPlan resolve_inference_run(const config::LoadedScenario& loaded);

// The closed-form figures of a scenario (no simulation). Peak rates, no efficiencies: these are
// the lecture's floors.
struct InferenceAlgebra {
  int gpus = 0;
  double total_params = 0;
  double active_params = 0;
  double weight_bytes = 0;              // all weights, once
  double weight_read_floor_s = 0;       // sum over stages of the largest rank's weights / HBM B/s
  double compute_time_per_token_s = 0;  // 2 N_active / (GPUs x peak FLOP/s): the step's slope in B
  double break_even_batch = 0;          // B* (inference_ledger.h)
  double price_per_gpu_s = 0;           // dollars
  double cost_floor_per_mtok = 0;       // compute-bound cost of a million tokens, dollars
  double kv_bytes_per_sequence = 0;     // at the scenario's context
  double kv_bytes_per_token = 0;        // per token of context, all layers
};

struct InferencePoint {
  std::string phase;  // "decode" or "prefill"
  int64_t batch = 0;
  int64_t context = 0;
  double step_time_s = 0;
  double tokens_per_s = 0;
  double latency_per_token_s = 0;  // decode: the step; prefill: time to first token
  double cost_per_mtok = 0;        // dollars per million tokens at inference.gpu_hour_price
  double weight_floor_s = 0;
  double compute_floor_s = 0;   // batch tokens at peak FLOP/s on all GPUs
  double max_weight_bytes = 0;  // per GPU, the most held
  double max_kv_bytes = 0;      // per GPU, the most held
  double ep_time_s = 0;         // rank 0: its dispatch and combine all-to-alls (waits included)
  double scale_up_bytes = 0;    // network bytes between GPUs of one scale-up domain
  double scale_out_bytes = 0;   // ... between domains
  double crossing_share = 0;    // scale_out / (scale_up + scale_out)
  int gpus = 0;
  int domain_size = 0;
};

InferenceAlgebra inference_algebra(const InferenceRunPlan& plan);

// Simulates one step. One simulation per process (SimGrid).
InferencePoint run_inference(const InferenceRunPlan& plan, InferencePhase phase);

nlohmann::ordered_json to_json(const InferencePoint& point);
InferencePoint inference_point_from_json(const nlohmann::json& j);
nlohmann::ordered_json to_json(const InferenceAlgebra& algebra);

}  // namespace racksim::app
