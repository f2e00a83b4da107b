// The result of `racksim plan`: per candidate cluster, its best layout and what the whole
// training run takes on it (time, GPU-hours, energy, cost, goodput), as a table, a CSV, JSON
// and an SVG of time to train against cost.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/goodput.h"
#include "analysis/run_cost.h"

namespace racksim::analysis {

struct PlanRow {
  std::string cluster;  // as given: "hgx-b300:64"
  std::string preset;
  int nodes = 0;
  int gpus = 0;
  // The layout search: grid points, how many were valid and fit in memory, how many ran.
  size_t layouts = 0;
  size_t layouts_fit = 0;
  size_t layouts_simulated = 0;
  bool found = false;  // a layout ran; otherwise `reason` says why not
  std::string reason;
  std::string layout;  // "TP1 PP2 CP16 EP8 DP16"
  std::string point;   // its sweep point id, e.g. "p004"
  double step_time_s = 0;
  double tokens_per_step = 0;
  double mfu = 0;  // model FLOPs utilization
  double step_facility_j = 0;
  double gpu_average_w = 0;
  double tokens = 0;  // the budget
  double steps = 0;
  Goodput goodput;
  double energy_j = 0;  // facility energy of the run, failures included
  CostModel cost_model;
  RunCost cost;
  // How far to trust the best step: its report's `validation`, the rows of the README's
  // accuracy table that check its hardware configuration.
  nlohmann::ordered_json validation;
  double tokens_per_s() const { return step_time_s > 0 ? tokens_per_step / step_time_s : 0; }
};

// The run figures of a cluster from its best step: steps = tokens / tokens_per_step; the ideal
// time is steps x step time; goodput stretches it; the failed and re-done time burns energy at
// the step's average power; cost on the cluster's basis over the effective time.
void fill_run_figures(const ReliabilityModel& reliability, const CostModel& cost_model,
                      double checkpoint_bytes, PlanRow* row);

std::string plan_table(const std::vector<PlanRow>& rows, double tokens);
std::string plan_csv(const std::vector<PlanRow>& rows);
nlohmann::ordered_json plan_json(const std::vector<PlanRow>& rows, double tokens);
void plan_svg(const std::vector<PlanRow>& rows, double tokens, std::ostream& os);

// The row to recommend: the cheapest found, and the fastest found (indices; -1 if none).
int cheapest_row(const std::vector<PlanRow>& rows);
int fastest_row(const std::vector<PlanRow>& rows);

}  // namespace racksim::analysis
