// `racksim plan`: a model scenario, a token budget and candidate clusters. For each cluster the
// sweep machinery (app/studies/sweep.h) searches a grid of layouts (memory filter in process, the
// points that fit simulated in parallel child processes, or emitted as jobs), at ANALYTIC
// fidelity with folded replicas unless the user asks otherwise; the layout with the most
// tokens/s wins, and its report's step time and energy become the whole run's time, energy,
// cost and goodput (analysis/plan_table.h).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "analysis/plan_table.h"
#include "app/studies/sweep.h"

namespace racksim::app {

// One candidate: "PRESET:N[@PRICE]": N servers (N racks for an NVL72 preset), optionally at a
// rental price in dollars per GPU-hour.
struct ClusterChoice {
  std::string text;  // as given
  std::string preset;
  int systems = 0;
  int nodes = 0;
  int gpus = 0;
  double gpu_hour_price = -1;    // < 0: the preset's
  std::string dir_name() const;  // "hgx-b300-64": its folder under --out
};

// Parses the --clusters list. Throws InputError naming --clusters for an unknown preset, a
// count that is not a positive integer or a bad price.
std::vector<ClusterChoice> parse_clusters(const std::string& list);

struct PlanSpec {
  std::string scenario;
  double tokens = 0;
  std::vector<ClusterChoice> clusters;
  std::vector<std::string> sets;  // --set: fixed overrides and layout axes, for every cluster
};

// The layout axes searched when --set gives none.
std::vector<std::string> default_layout_axes();

// The sweep of one cluster: the user's --set (and the default axes when none is swept), then
// the cluster's preset, nodes and price, ANALYTIC fidelity and folding unless --set says.
SweepSpec cluster_sweep(const PlanSpec& spec, const ClusterChoice& cluster);

// Points refused only because the plan's default folding does not apply to them (replicas
// placed unevenly on the scale-up domains) are checked again without folding, to simulate whole.
void unfold_refused_points(const SweepSpec& sweep, SweepRun* run);

// Fills the row of a cluster from its sweep: the best simulated point's report
// (dir/points/<id>/report.json) and the resolved scenario of that point.
analysis::PlanRow plan_row(const PlanSpec& spec, const ClusterChoice& cluster,
                           const SweepSpec& sweep, const SweepRun& run,
                           const std::filesystem::path& dir);

}  // namespace racksim::app
