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
  // speed. The decode step keeps the scenario's, as its bytes inside and across domains are
  // read off the flows.
  std::string training_fidelity = "AGGREGATED";
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
  int ep = 1;
  int gpus = 0;
  std::vector<RacksRow> rows;
};

RacksStudy run_racks_study(const RacksStudySpec& spec);

// Share of a balanced all-to-all's network bytes (a rank's bytes to itself stay off the
// network) that cross a domain boundary, for ep consecutive ranks in domains of `domain`
// GPUs with ep and domain dividing each other: (ep - d) / (ep - 1), d = min(ep, domain).
double network_crossing_share(int ep, int domain);

std::string racks_table(const RacksStudy& study);
void write_racks_svg(const RacksStudy& study, std::ostream& os);
nlohmann::ordered_json racks_json(const RacksStudy& study);

}  // namespace racksim::app
