// `racksim racks`: the rack-size study for a MoE model. For each scale-up domain size the same
// scenario is simulated twice in child processes: one decode step (racksim infer's point) and,
// unless skipped, one training step (racksim run, AGGREGATED fidelity). Expert parallelism keeps
// the layout's ep consecutive ranks: inside one domain when ep <= domain size, across domains
// when not. Reported per domain: both step times, rank 0's all-to-all time, the network bytes
// inside and across domains, and the share that crossed beside its closed form.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/inference_run.h"

namespace racksim::app {

struct RacksStudySpec {
  std::string scenario;
  std::vector<std::string> overrides;
  std::vector<int> domain_sizes;
  bool training = true;
  // The training step's collective fidelity (sim.fidelity): AGGREGATED by default, ANALYTIC for
  // speed.
  std::string training_fidelity = "AGGREGATED";
  // The decode step's; empty keeps the scenario's sim.fidelity. ANALYTIC collectives still count
  // their bytes per rank pair, so the bytes inside and across domains are the same.
  std::string decode_fidelity;
  int jobs = 1;
};

struct RacksRow {
  int domain_size = 0;
  std::optional<InferencePoint> decode;
  std::optional<double> training_step_s;
  std::optional<double> training_ep_exposed_s;
  double closed_form_crossing = 0;  // balanced dispatch, contiguous EP groups
  std::vector<std::string> failures;
};

struct RacksStudy {
  std::string title;
  std::string training_fidelity;
  std::string decode_fidelity;  // empty: the scenario's
  int ep = 1;
  int gpus = 0;
  std::vector<RacksRow> rows;
};

RacksStudy run_racks_study(const RacksStudySpec& spec);

// Share of a balanced all-to-all's network bytes (a rank's bytes to itself stay off the
// network) that cross a domain boundary, for ep consecutive ranks starting a domain, in domains
// of `domain` GPUs: sum over domains of s (ep - s) / (ep (ep - 1)), s the ranks in each (the
// last domain may be partial); (ep - d) / (ep - 1) with d = min(ep, domain) when they divide.
double network_crossing_share(int ep, int domain);

std::string racks_table(const RacksStudy& study);
void write_racks_svg(const RacksStudy& study, std::ostream& os);
nlohmann::ordered_json racks_json(const RacksStudy& study);

}  // namespace racksim::app
