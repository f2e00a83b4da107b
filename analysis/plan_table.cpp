#include "analysis/plan_table.h"

#include <array>
#include <cmath>

#include <fmt/format.h>

#include "analysis/log_chart.h"
#include "analysis/validation_evidence.h"

namespace racksim::analysis {

namespace {

constexpr double kDay = 86400;
constexpr double kMWh = 3.6e9;  // joules

// The palette of the other charts (log_chart.h users), one colour per cluster.
constexpr std::array<const char*, 8> kColors = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                                "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string search_summary(const PlanRow& r) {
  return fmt::format("{} layouts, {} fit, {} simulated", r.layouts, r.layouts_fit,
                     r.layouts_simulated);
}

}  // namespace

void fill_run_figures(const ReliabilityModel& reliability, const CostModel& cost_model,
                      double checkpoint_bytes, PlanRow* row) {
  PlanRow& r = *row;
  r.steps = r.tokens_per_step > 0 ? std::ceil(r.tokens / r.tokens_per_step) : 0;
  const int nodes = r.nodes;
  r.goodput = run_goodput(reliability, r.gpus, nodes, checkpoint_bytes, r.steps * r.step_time_s);
  const double average_w = r.step_time_s > 0 ? r.step_facility_j / r.step_time_s : 0;
  r.energy_j = average_w * r.goodput.effective_time_s;
  r.cost_model = cost_model;
  r.cost = run_cost(cost_model, r.gpus, r.goodput.effective_time_s, r.energy_j, r.tokens);
}

int cheapest_row(const std::vector<PlanRow>& rows) {
  int best = -1;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].found) continue;
    if (best < 0 || rows[i].cost.usd() < rows[best].cost.usd()) best = static_cast<int>(i);
  }
  return best;
}

int fastest_row(const std::vector<PlanRow>& rows) {
  int best = -1;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].found) continue;
    if (best < 0 || rows[i].goodput.effective_time_s < rows[best].goodput.effective_time_s) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

std::string plan_table(const std::vector<PlanRow>& rows, double tokens) {
  std::string out = fmt::format("Training {:.4g} tokens:\n", tokens);
  out += fmt::format(
      "{:<18} {:>6} {:<24} {:>9} {:>10} {:>5} {:>8} {:>8} {:>10} {:>8} {:>10} "
      "{:>8} {:>9}\n",
      "cluster", "GPUs", "best layout", "step s", "tokens/s", "MFU", "goodput", "days", "GPU-hours",
      "MWh", "cost $", "$/Mtok", "failures");
  for (const PlanRow& r : rows) {
    if (!r.found) {
      out += fmt::format("{:<18} {:>6} no layout ran ({}): {}\n", r.cluster, r.gpus,
                         search_summary(r), r.reason);
      continue;
    }
    out += fmt::format(
        "{:<18} {:>6} {:<24} {:>9.4g} {:>10.4g} {:>5.1f} {:>7.1f}% {:>8.1f} {:>10.4g} {:>8.4g} "
        "{:>10.4g} {:>8.3g} {:>9.0f}\n",
        r.cluster, r.gpus, r.layout, r.step_time_s, r.tokens_per_s(), 100 * r.mfu,
        100 * r.goodput.goodput, r.goodput.effective_time_s / kDay, r.cost.gpu_hours,
        r.energy_j / kMWh, r.cost.usd(), r.cost.usd_per_million_tokens(),
        r.goodput.expected_failures);
  }
  const int cheapest = cheapest_row(rows);
  const int fastest = fastest_row(rows);
  if (cheapest >= 0) {
    out += fmt::format("\ncheapest: {} ({}) at ${:.4g}; fastest: {} ({}) in {:.1f} days\n",
                       rows[cheapest].cluster, rows[cheapest].layout, rows[cheapest].cost.usd(),
                       rows[fastest].cluster, rows[fastest].layout,
                       rows[fastest].goodput.effective_time_s / kDay);
  }
  for (const PlanRow& r : rows) {
    if (!r.found) continue;
    out += fmt::format("  {}: {}; {}\n", r.cluster, search_summary(r),
                       validation_summary(validation_evidence_from_json(r.validation)));
  }
  return out;
}

std::string plan_csv(const std::vector<PlanRow>& rows) {
  std::string out =
      "cluster,preset,nodes,gpus,found,layout,step_time_s,tokens_per_s,mfu_model,steps,"
      "ideal_time_s,goodput,effective_time_s,gpu_hours,energy_mwh,cost_usd,usd_per_mtok,"
      "cost_basis,expected_failures,checkpoint_bytes,checkpoint_interval_s,layouts,layouts_fit,"
      "layouts_simulated,reason\n";
  for (const PlanRow& r : rows) {
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        csv_field(r.cluster), r.preset, r.nodes, r.gpus, r.found ? 1 : 0, csv_field(r.layout),
        r.step_time_s, r.tokens_per_s(), r.mfu, r.steps, r.goodput.ideal_time_s, r.goodput.goodput,
        r.goodput.effective_time_s, r.cost.gpu_hours, r.energy_j / kMWh, r.cost.usd(),
        r.cost.usd_per_million_tokens(), r.cost.owned ? "owned" : "rental",
        r.goodput.expected_failures, r.goodput.checkpoint_bytes, r.goodput.interval_s, r.layouts,
        r.layouts_fit, r.layouts_simulated, csv_field(r.reason));
  }
  return out;
}

nlohmann::ordered_json plan_json(const std::vector<PlanRow>& rows, double tokens) {
  nlohmann::ordered_json j;
  j["tokens"] = tokens;
  j["clusters"] = nlohmann::ordered_json::array();
  for (const PlanRow& r : rows) {
    nlohmann::ordered_json c;
    c["cluster"] = r.cluster;
    c["preset"] = r.preset;
    c["nodes"] = r.nodes;
    c["gpus"] = r.gpus;
    c["search"] = {
        {"layouts", r.layouts}, {"fit", r.layouts_fit}, {"simulated", r.layouts_simulated}};
    c["found"] = r.found;
    if (!r.found) {
      c["reason"] = r.reason;
    } else {
      c["layout"] = r.layout;
      c["point"] = r.point;
      c["validation"] = r.validation;
      c["step_time_s"] = r.step_time_s;
      c["tokens_per_step"] = r.tokens_per_step;
      c["tokens_per_s"] = r.tokens_per_s();
      c["mfu_model"] = r.mfu;
      c["steps"] = r.steps;
      c["gpu_average_w"] = r.gpu_average_w;
      c["step_energy_j"] = r.step_facility_j;
      c["energy_j"] = r.energy_j;
      c["energy_mwh"] = r.energy_j / kMWh;
      c["goodput"] = goodput_json(r.goodput);
      c["cost"] = cost_json(r.cost_model, r.cost);
    }
    j["clusters"].push_back(c);
  }
  return j;
}

void plan_svg(const std::vector<PlanRow>& rows, double tokens, std::ostream& os) {
  ChartPanel panel;
  panel.title = "time to train against cost, each cluster at its best layout";
  panel.x_label = "effective time to train (days, failures included)";
  panel.y_label = "cost (million $)";
  size_t color = 0;
  for (const PlanRow& r : rows) {
    if (!r.found) continue;
    ChartSeries s;
    s.name = fmt::format("{} {}: {:.1f} d, ${:.3g}M", r.cluster, r.layout,
                         r.goodput.effective_time_s / kDay, r.cost.usd() / 1e6);
    s.color = kColors[color++ % kColors.size()];
    s.points.emplace_back(r.goodput.effective_time_s / kDay, r.cost.usd() / 1e6);
    panel.series.push_back(std::move(s));
  }
  write_log_charts(fmt::format("racksim plan: {:.3g} training tokens", tokens), {panel}, os);
}

}  // namespace racksim::analysis
