// The step report: step time, throughput, MFU with its denominator spelled out, the breakdown
// of the critical rank, the memory ledger, and how the simulation ran. Printed as text and
// written as report.json (stable keys: see README.md, "Reading the report").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/breakdown.h"
#include "analysis/compute_bounds.h"
#include "analysis/critical_path.h"
#include "analysis/energy.h"
#include "analysis/fault_report.h"
#include "analysis/link_usage.h"
#include "analysis/run_cost.h"
#include "analysis/validation_evidence.h"
#include "sim/engine.h"
#include "workloads/training/memory_ledger.h"
#include "workloads/training/training_plan.h"
#include "workloads/training/training_step.h"

namespace racksim::analysis {

struct MfuFigures {
  double model = 0;     // MFU A: model FLOPs (6N + aL per token), recompute not counted
  double hardware = 0;  // MFU B: model FLOPs plus the recomputed forward
  double peak_flops_per_gpu = 0;
  std::string dtype;
  uint32_t gpus = 0;
  double flops_per_token = 0;           // 6N + aL
  double hardware_flops_per_token = 0;  // + recompute
  double active_params = 0;             // N
  double total_params = 0;
  double attention_coeff = 0;  // a
  double attention_share = 0;  // f = aL / (6N + aL)
  bool causal_halving = false;
  int64_t seq_length = 0;
};

// How the reported step was obtained (StepReport::steady_state; analysis/steady_state.h).
struct SteadyStateUse {
  bool extended = false;
  int micro_batches = 0;        // the step's, per data-parallel replica
  int small_micro_batches = 0;  // the two steps simulated
  int large_micro_batches = 0;
  double period_s = 0;       // the step time each further micro-batch adds
  double spacing_error = 0;  // the worst relative disagreement found by the check
  std::string not_extended;  // why every micro-batch was replayed, when not extended (or empty)
};

struct StepReport {
  std::string scenario;
  std::string description;  // model, hardware, layout in one line
  double step_time_s = 0;
  double tokens_per_step = 0;
  double tokens_per_s = 0;
  double ms_per_1k_tokens = 0;
  MfuFigures mfu;
  // The rows of racksim's validation this hardware configuration was checked on.
  ValidationEvidence validation;
  Breakdown breakdown;
  // The critical rank's kernel time by what sets it (filled by app/training_run.cpp, which has
  // the compute model).
  ComputeBounds kernel_bounds;
  int critical_stage = 0;
  CriticalPath critical_path;                  // the chain of operations that set the step time
  std::vector<PathOperation> path_operations;  // its longest operations, grouped by label
  LinkSummary links;  // filled by the caller that has the topology (app/training_run.cpp)
  std::vector<int> stage_of_rank;  // pipeline stage of each rank
  MemoryLedger memory;
  // Filled by the caller that has the topology (app/training_run.cpp): the step's energy and
  // what the step costs.
  StepEnergy energy;
  CostModel cost_model;
  RunCost step_cost;
  // Filled by app/training_run.cpp when the scenario has faults: what they cost the step.
  FaultsReport faults;
  uint64_t sim_events = 0;
  uint64_t sim_ops = 0;
  uint64_t sim_flows = 0;
  double sim_wall_s = 0;
  std::string fidelity;
  double fidelity_error_budget = 0;   // relative step-time error against FULL it is held to
  uint64_t analytic_collectives = 0;  // collectives timed by the analytic model
  uint64_t flow_collectives = 0;      // collectives run as flows
  // Collectives timed from hardware.collectives.measured_table (analytic, or flows lasting at
  // least the measured time).
  uint64_t measured_table_collectives = 0;
  int folded_replicas = 1;       // data-parallel replicas one simulated replica stands for
  uint64_t routes_computed = 0;  // by the platform's router, on demand
  uint64_t gpu_pairs = 0;        // ordered GPU pairs (what an all-pairs table would hold)
  std::vector<sim::AlgorithmUse> algorithms;  // which algorithm each kind of collective ran
  SteadyStateUse steady_state;                // whether the step was extended from shorter ones
};

MfuFigures mfu_figures(const TrainingPlan& plan, double step_time_s);

// FLOPs per token the GPUs run: the model's (6N + aL) plus what recompute runs again (full: the
// layers' forward; selective: the attention scores, aL / 3, with CORE_ATTN, and twice the
// weights of what MLA_UP_PROJ, MLP, MOE and SHARED_EXPERTS run again; the norms and activations
// count no matrix FLOPs).
// MFU B's numerator per token.
double hardware_flops_per_token(const TrainingPlan& plan, bool causal_halving);

// The figures that follow from the plan and the step time alone: title, description, step time,
// throughput, MFU and the memory ledger.
void set_plan_figures(const TrainingPlan& plan, double step_time_s, StepReport* report);

// The plan's kind of layout against its scale-up domain (validation_evidence.h, layout_kind).
std::string plan_layout_kind(const TrainingPlan& plan);

// The report of a simulated step; the critical path's `top_operations` longest operation groups.
StepReport make_step_report(const TrainingPlan& plan, const TrainingStep& step,
                            const sim::SimResult& result, size_t top_operations = 10);

nlohmann::ordered_json report_json(const StepReport& report);
std::string report_text(const StepReport& report);

}  // namespace racksim::analysis
