#include "app/studies/plan.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/child_process.h"
#include "common/error.h"
#include "config/scenario_loader.h"
#include "topologies/hardware_presets.h"
#include "workloads/training/training_step.h"

namespace racksim::app {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void bad_cluster(const std::string& item, const std::string& why) {
  throw InputError({"--clusters", 0, 0}, "--clusters",
                   fmt::format("'{}': {} (expected PRESET:N[@PRICE], e.g. hgx-b300:64 or "
                               "gb300-nvl72:8@7.5; N counts servers, or racks for an NVL72 preset)",
                               item, why));
}

ClusterChoice parse_cluster(const std::string& item) {
  ClusterChoice c;
  c.text = item;
  const size_t colon = item.find(':');
  if (colon == std::string::npos) bad_cluster(item, "no ':N'");
  c.preset = item.substr(0, colon);
  const auto hw = topo::hardware_preset(c.preset);
  if (!hw) bad_cluster(item, fmt::format("unknown hardware preset '{}'", c.preset));
  const size_t at = item.find('@', colon);
  const std::string count = item.substr(colon + 1, at == std::string::npos ? at : at - colon - 1);
  const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), c.systems);
  if (ec != std::errc() || end != count.data() + count.size() || c.systems <= 0) {
    bad_cluster(item, fmt::format("'{}' is not a positive whole number", count));
  }
  if (at != std::string::npos) {
    const std::string price = item.substr(at + 1);
    const auto [pend, pec] =
        std::from_chars(price.data(), price.data() + price.size(), c.gpu_hour_price);
    if (pec != std::errc() || pend != price.data() + price.size() || !(c.gpu_hour_price >= 0)) {
      bad_cluster(item, fmt::format("'{}' is not a price in dollars per GPU-hour", price));
    }
  }
  // An NVL72 preset describes one rack of trays (nodes); N counts racks.
  const int nodes_per_system = hw->node_kind() == config::Hardware::NVL_TRAY
                                   ? hw->scale_up().domain_size() / hw->gpus_per_node()
                                   : 1;
  c.nodes = c.systems * nodes_per_system;
  c.gpus = c.nodes * hw->gpus_per_node();
  return c;
}

bool sets_field(const std::vector<std::string>& sets, const std::string& field) {
  return std::any_of(sets.begin(), sets.end(),
                     [&](const std::string& s) { return s.rfind(field + "=", 0) == 0; });
}

std::string layout_text(const config::Scenario& s) {
  const config::Layout& l = s.layout();
  return fmt::format("TP{} PP{} CP{} EP{} DP{}{}", l.tp(), l.pp(), l.cp(), l.ep(), l.dp(),
                     l.sequence_parallel() ? " SP" : "");
}

// Why no layout of the cluster ran: a failure first, then memory, then validation.
std::string no_layout_reason(const SweepRun& run) {
  for (auto status : {analysis::PointStatus::kFailed, analysis::PointStatus::kDoesNotFit,
                      analysis::PointStatus::kInvalid}) {
    for (const auto& p : run.points) {
      if (p.status == status) {
        return fmt::format("{} (e.g. {} {})", analysis::to_string(status), p.id, p.reason);
      }
    }
  }
  return "no layout to try";
}

void count_points(const SweepRun& run, analysis::PlanRow* row) {
  row->layouts = run.points.size();
  for (const auto& p : run.points) {
    if (p.status == analysis::PointStatus::kSimulated) ++row->layouts_simulated;
    if (p.status != analysis::PointStatus::kInvalid &&
        p.status != analysis::PointStatus::kDoesNotFit) {
      ++row->layouts_fit;
    }
  }
}

constexpr const char* kFoldOn = "sim.fold_replicas=true";

}  // namespace

void unfold_refused_points(const SweepSpec& sweep, SweepRun* run) {
  for (size_t i = 0; i < run->points.size(); ++i) {
    analysis::SweepPoint& point = run->points[i];
    std::vector<std::string>& overrides = run->overrides[i];
    const auto fold = std::find(overrides.begin(), overrides.end(), kFoldOn);
    if (point.status != analysis::PointStatus::kInvalid || fold == overrides.end() ||
        point.reason.find("cannot fold") == std::string::npos) {
      continue;
    }
    *fold = "sim.fold_replicas=false";
    SweepRun alone = plan_sweep(parse_sweep(sweep.scenario, overrides));
    const std::string id = point.id;
    const std::vector<std::string> values = point.values;
    point = alone.points.front();
    point.id = id;
    point.values = values;
  }
}

std::string ClusterChoice::dir_name() const {
  return fmt::format("{}-{}", preset, systems);
}

std::vector<ClusterChoice> parse_clusters(const std::string& list) {
  std::vector<ClusterChoice> clusters;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const std::string item =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) bad_cluster(list, "an empty entry");
    clusters.push_back(parse_cluster(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (size_t i = 0; i < clusters.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (clusters[i].dir_name() == clusters[j].dir_name()) {
        bad_cluster(clusters[i].text, "listed twice");
      }
    }
  }
  return clusters;
}

std::vector<std::string> default_layout_axes() {
  return {"layout.tp=1,2,4,8", "layout.pp=1,2,4,8"};
}

SweepSpec cluster_sweep(const PlanSpec& spec, const ClusterChoice& cluster) {
  std::vector<std::string> sets = spec.sets;
  const SweepSpec user = parse_sweep(spec.scenario, spec.sets);
  if (user.axes.empty()) {
    for (const auto& axis : default_layout_axes()) sets.push_back(axis);
  }
  sets.push_back("hardware.preset=" + cluster.preset);
  sets.push_back(fmt::format("hardware.nodes={}", cluster.nodes));
  if (cluster.gpu_hour_price >= 0) {
    sets.push_back(fmt::format("hardware.cost.gpu_hour_price={}", cluster.gpu_hour_price));
  }
  if (!sets_field(spec.sets, "sim.fidelity")) sets.push_back("sim.fidelity=ANALYTIC");
  if (!sets_field(spec.sets, "sim.fold_replicas")) sets.push_back(kFoldOn);
  return parse_sweep(spec.scenario, sets);
}

analysis::PlanRow plan_row(const PlanSpec& spec, const ClusterChoice& cluster,
                           const SweepSpec& sweep, const SweepRun& run, const fs::path& dir) {
  analysis::PlanRow row;
  row.cluster = cluster.text;
  row.preset = cluster.preset;
  row.nodes = cluster.nodes;
  row.gpus = cluster.gpus;
  row.tokens = spec.tokens;
  count_points(run, &row);
  const std::vector<size_t> order = analysis::ranked_order(run.points);
  if (order.empty() || run.points[order[0]].status != analysis::PointStatus::kSimulated) {
    row.reason = no_layout_reason(run);
    return row;
  }
  const size_t best = order[0];
  row.found = true;
  row.point = run.points[best].id;
  const auto report =
      nlohmann::json::parse(read_text_file(dir / "points" / row.point / "report.json"));
  const config::LoadedScenario loaded = config::load_scenario(sweep.scenario, run.overrides[best]);
  row.layout = layout_text(loaded.scenario);
  row.step_time_s = report.at("step_time_s").get<double>();
  row.tokens_per_step = report.at("tokens_per_step").get<double>();
  row.mfu = report.at("mfu").at("model").get<double>();
  row.validation = report.at("validation");
  row.step_facility_j = report.at("energy").at("j_per_step").get<double>();
  row.gpu_average_w = report.at("energy").at("gpu_average_w").get<double>();
  const config::Hardware& hw = loaded.scenario.hardware();
  const double weight_bytes = bytes_per_element(to_data_type(loaded.scenario.training().dtype()));
  analysis::fill_run_figures(
      analysis::ReliabilityModel::from_hardware(hw), analysis::CostModel::from_hardware(hw),
      analysis::checkpoint_bytes(report.at("mfu").at("total_params").get<double>(), weight_bytes),
      &row);
  return row;
}

}  // namespace racksim::app
