#include "app/studies/racks_study.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/log_chart.h"
#include "app/studies/point_runner.h"
#include "config/scenario_loader.h"

namespace racksim::app {

namespace {

std::vector<std::string> set_args(const std::vector<std::string>& overrides, int domain) {
  std::vector<std::string> args;
  for (const auto& o : overrides) args.insert(args.end(), {"--set", o});
  args.insert(args.end(), {"--set", fmt::format("hardware.scale_up.domain_size={}", domain)});
  return args;
}

std::string cell(const std::optional<double>& v, double scale) {
  return v ? fmt::format("{:.4g}", *v * scale) : "-";
}

}  // namespace

double network_crossing_share(int ep, int domain) {
  if (ep <= 1) return 0.0;
  // Each rank sends 1 / (ep - 1) of its bytes to every other rank; those outside its own
  // domain cross. The last domain may be partial (256 ranks in domains of 72: 72, 72, 72, 40).
  double crossing = 0;
  for (int first = 0; first < ep; first += domain) {
    const int size = std::min(domain, ep - first);
    crossing += static_cast<double>(size) * (ep - size);
  }
  return crossing / (static_cast<double>(ep) * (ep - 1));
}

RacksStudy run_racks_study(const RacksStudySpec& spec) {
  const config::LoadedScenario loaded = config::load_scenario(spec.scenario, spec.overrides);
  config::require_inference_section(loaded, "racks");
  RacksStudy study;
  study.title = loaded.scenario.name().empty() ? spec.scenario : loaded.scenario.name();
  study.ep = std::max(1, loaded.scenario.layout().ep());
  study.training_fidelity = spec.training_fidelity;
  study.decode_fidelity = spec.decode_fidelity;
  study.gpus = loaded.scenario.hardware().nodes() * loaded.scenario.hardware().gpus_per_node();
  std::vector<PointJob> jobs;
  for (int domain : spec.domain_sizes) {
    PointJob decode{{"infer", spec.scenario, "--point-out", "{OUT}/point.json"}, "point.json"};
    const auto sets = set_args(spec.overrides, domain);
    // Each domain size is checked here, so bad input stops before any child starts.
    std::vector<std::string> point_overrides = spec.overrides;
    point_overrides.push_back(fmt::format("hardware.scale_up.domain_size={}", domain));
    config::load_scenario(spec.scenario, point_overrides);
    decode.args.insert(decode.args.end(), sets.begin(), sets.end());
    if (!spec.decode_fidelity.empty()) {
      decode.args.insert(decode.args.end(), {"--set", "sim.fidelity=" + spec.decode_fidelity});
    }
    jobs.push_back(decode);
    if (!spec.training) continue;
    PointJob train{{"run", spec.scenario, "--out", "{OUT}", "--report-only"}, "report.json"};
    train.args.insert(train.args.end(), sets.begin(), sets.end());
    train.args.insert(train.args.end(), {"--set", "sim.fidelity=" + spec.training_fidelity});
    jobs.push_back(train);
  }
  const auto outcomes = run_points(jobs, spec.jobs);
  size_t next = 0;
  for (int domain : spec.domain_sizes) {
    RacksRow row;
    row.domain_size = domain;
    row.closed_form_crossing = network_crossing_share(study.ep, domain);
    const auto& d = outcomes[next++];
    if (d.json) {
      row.decode = inference_point_from_json(*d.json);
    } else {
      row.failures.push_back("decode: " + d.error);
    }
    if (spec.training) {
      const auto& t = outcomes[next++];
      if (t.json) {
        row.training_step_s = (*t.json)["step_time_s"].get<double>();
        row.training_ep_exposed_s = (*t.json)["breakdown_s"]["exposed_comm"]["ep"].get<double>();
      } else {
        row.failures.push_back("training: " + t.error);
      }
    }
    study.rows.push_back(std::move(row));
  }
  return study;
}

std::string racks_table(const RacksStudy& s) {
  std::string out = fmt::format("{}\n{} GPUs, expert parallelism over {} consecutive GPUs\n\n",
                                s.title, s.gpus, s.ep);
  out += fmt::format("{:>7} {:>9} {:>11} {:>11} {:>11} {:>11} {:>12} {:>12} {:>9} {:>9}\n",
                     "domain", "EP fits", "train s", "train EP s", "decode ms", "a2a ms", "up GB",
                     "out GB", "crossing", "formula");
  for (const auto& r : s.rows) {
    const auto& d = r.decode;
    out += fmt::format(
        "{:>7} {:>9} {:>11} {:>11} {:>11} {:>11} {:>12} {:>12} {:>9} {:>8.1f}%\n", r.domain_size,
        s.ep <= r.domain_size ? "yes" : "no", cell(r.training_step_s, 1),
        cell(r.training_ep_exposed_s, 1), d ? fmt::format("{:.4g}", d->step_time_s * 1e3) : "-",
        d ? fmt::format("{:.4g}", d->ep_time_s * 1e3) : "-",
        d ? fmt::format("{:.4g}", d->scale_up_bytes / 1e9) : "-",
        d ? fmt::format("{:.4g}", d->scale_out_bytes / 1e9) : "-",
        d ? fmt::format("{:.1f}%", 100 * d->crossing_share) : "-", 100 * r.closed_form_crossing);
    for (const auto& f : r.failures) out += fmt::format("  failed: {}\n", f);
  }
  out += fmt::format(
             "\ntrain s: one training step ({} fidelity); train EP s: its exposed EP "
             "communication;\n",
             s.training_fidelity) +
         fmt::format(
             "decode ms: one decode step of inference.batch sequences ({} fidelity); a2a ms: "
             "rank 0's dispatch + combine;\n",
             s.decode_fidelity.empty() ? "the scenario's" : s.decode_fidelity) +
         "up/out GB: decode network bytes inside / across scale-up domains; crossing: the share "
         "across,\n"
         "formula: (ep - d) / (ep - 1) for a balanced all-to-all, d = EP ranks per domain\n"
         "(weighted by domain when the last domain is partial).\n"
         "How far to trust it: no decode step is checked. The MoE training steps checked across "
         "domain\nsizes (NVIDIA's gpt-oss-120b rows on 8-GPU servers and NVL72 racks; README, "
         "\"How accurate\nit is\") are all faster in racksim than published, and their "
         "8-GPU-server rows do not move with\nEP size or NIC speed where racksim's all-to-all "
         "does: read the training columns as a\ncomparison of fabrics under racksim's all-to-all "
         "model (docs/validation.md).\n";
  return out;
}

void write_racks_svg(const RacksStudy& s, std::ostream& os) {
  analysis::ChartPanel times{
      "step time vs scale-up domain", "GPUs per scale-up domain", "ms", {}, {}};
  analysis::ChartPanel bytes{
      "decode all-to-all bytes", "GPUs per scale-up domain", "GB per step", {}, {}};
  analysis::ChartSeries train{"training step", "#1f77b4", false, {}};
  analysis::ChartSeries decode{"decode step", "#d62728", false, {}};
  analysis::ChartSeries a2a{"decode all-to-all (rank 0)", "#ff7f0e", false, {}};
  analysis::ChartSeries up{"inside a domain", "#2ca02c", false, {}};
  analysis::ChartSeries out{"across domains", "#9467bd", false, {}};
  for (const auto& r : s.rows) {
    const double x = r.domain_size;
    if (r.training_step_s) train.points.emplace_back(x, *r.training_step_s * 1e3);
    if (r.decode) {
      decode.points.emplace_back(x, r.decode->step_time_s * 1e3);
      a2a.points.emplace_back(x, r.decode->ep_time_s * 1e3);
      up.points.emplace_back(x, r.decode->scale_up_bytes / 1e9);
      out.points.emplace_back(x, r.decode->scale_out_bytes / 1e9);
    }
  }
  times.series = {train, decode, a2a};
  bytes.series = {up, out};
  const analysis::ChartMarker ep{static_cast<double>(s.ep), fmt::format("ep={}", s.ep)};
  times.markers.push_back(ep);
  bytes.markers.push_back(ep);
  analysis::write_log_charts(s.title, {times, bytes}, os);
}

nlohmann::ordered_json racks_json(const RacksStudy& s) {
  nlohmann::ordered_json j{
      {"title", s.title},
      {"gpus", s.gpus},
      {"ep", s.ep},
      {"training_fidelity", s.training_fidelity},
      {"decode_fidelity", s.decode_fidelity.empty() ? "scenario" : s.decode_fidelity}};
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& r : s.rows) {
    nlohmann::ordered_json row{{"domain_size", r.domain_size},
                               {"closed_form_crossing", r.closed_form_crossing}};
    row["decode"] = r.decode ? to_json(*r.decode) : nlohmann::ordered_json();
    row["training_step_s"] =
        r.training_step_s ? nlohmann::ordered_json(*r.training_step_s) : nlohmann::ordered_json();
    row["training_ep_exposed_s"] = r.training_ep_exposed_s
                                       ? nlohmann::ordered_json(*r.training_ep_exposed_s)
                                       : nlohmann::ordered_json();
    row["failures"] = r.failures;
    j["rows"].push_back(row);
  }
  return j;
}

}  // namespace racksim::app
