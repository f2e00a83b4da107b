#include "analysis/validation_evidence.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace racksim::analysis {

namespace {

constexpr const char* kValidationEvidenceJson =
#include "analysis/validation_evidence.inc"
    ;

HardwareConfiguration configuration_of(const nlohmann::json& c) {
  // Reports written before the model kind was a key checked dense models only.
  return {c.at("hardware_preset").get<std::string>(), c.at("calibration").get<std::string>(),
          c.at("sustained_clock_ratio").get<double>(), c.at("training_dtype").get<std::string>(),
          c.value("model_kind", std::string("dense"))};
}

CheckedRun run_of(const nlohmann::json& r) {
  return {r.at("run").get<std::string>(),
          r.at("parameters_b").get<double>(),
          r.at("gpus").get<int>(),
          r.at("rows").get<int>(),
          r.at("mape_percent").get<double>(),
          r.at("mean_error_percent").get<double>()};
}

CheckedLayout layout_of(const nlohmann::json& l) {
  return {run_of(l),
          l.at("tp").get<int>(),
          l.at("pp").get<int>(),
          l.at("nodes").get<int>(),
          l.at("gpus_per_node").get<int>(),
          l.at("scale_up_domain_gpus").get<int>(),
          l.at("worst_percent").get<double>()};
}

ValidationCheck check_of(const nlohmann::json& c) {
  ValidationCheck check{c.at("what").get<std::string>(),
                        c.at("rows").get<int>(),
                        c.at("mape_percent").get<double>(),
                        c.at("worst_percent").get<double>(),
                        c.at("in_sample").get<bool>(),
                        {},
                        {}};
  if (c.contains("runs")) {
    for (const nlohmann::json& r : c.at("runs")) check.runs.push_back(run_of(r));
  }
  if (c.contains("layouts")) {
    for (const nlohmann::json& l : c.at("layouts")) check.layouts.push_back(layout_of(l));
  }
  return check;
}

nlohmann::ordered_json run_json(const CheckedRun& r) {
  return {{"run", r.run},
          {"parameters_b", r.parameters_b},
          {"gpus", r.gpus},
          {"rows", r.rows},
          {"mape_percent", r.mape_percent},
          {"mean_error_percent", r.mean_error_percent}};
}

nlohmann::ordered_json layout_kind_json(const LayoutKindEvidence& k) {
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const CheckedRun& r : k.runs) runs.push_back(run_json(r));
  return {{"kind", k.kind},
          {"rows", k.rows},
          {"mape_percent", k.mape_percent},
          {"mean_error_percent", k.mean_error_percent},
          {"worst_percent", k.worst_percent},
          {"runs", std::move(runs)}};
}

LayoutKindEvidence layout_kind_of(const nlohmann::json& k) {
  LayoutKindEvidence out{
      k.at("kind").get<std::string>(),     k.at("rows").get<int>(),
      k.at("mape_percent").get<double>(),  k.at("mean_error_percent").get<double>(),
      k.at("worst_percent").get<double>(), {}};
  for (const nlohmann::json& r : k.at("runs")) out.runs.push_back(run_of(r));
  return out;
}

NearestCheckedRun nearest_of(const nlohmann::json& n) {
  return {n.at("what").get<std::string>(), run_of(n.at("run")),
          n.at("this_run_parameters_b").get<double>(), n.at("this_run_gpus").get<int>()};
}

// A report lists this many runs of its kind of layout, the nearest to it; report.json all.
constexpr size_t kLayoutKindRunsShown = 4;

// How far apart two runs are: model size and GPU count, each as a factor.
double run_distance(double parameters_b, int gpus, const CheckedRun& run) {
  return std::abs(std::log(parameters_b / run.parameters_b)) +
         std::abs(std::log(static_cast<double>(gpus) / run.gpus));
}

void append_checks(const nlohmann::json& checks, std::vector<ValidationCheck>* out) {
  for (const nlohmann::json& check : checks) out->push_back(check_of(check));
}

// Parsed on first use and kept: constant data compiled into the binary.
const nlohmann::json& evidence_configurations() {
  static const nlohmann::json parsed = [] {
    const nlohmann::json doc = nlohmann::json::parse(kValidationEvidenceJson);
    if (!doc.contains("configurations")) {
      throw std::logic_error("data/validation-evidence.json holds no configurations");
    }
    return doc.at("configurations");
  }();
  return parsed;
}

bool same_configuration(const HardwareConfiguration& a, const HardwareConfiguration& b) {
  return a.preset == b.preset && a.calibration == b.calibration &&
         a.training_dtype == b.training_dtype && a.model_kind == b.model_kind &&
         std::abs(a.sustained_clock_ratio - b.sustained_clock_ratio) < 1e-6;
}

// "error -0.8 %" for one row; "3 rows, MAPE 6.3 %, mean +3.3 %" for several.
std::string run_errors(const CheckedRun& r) {
  return r.rows == 1 ? fmt::format("error {:+.1f} %", r.mean_error_percent)
                     : fmt::format("{} rows, MAPE {:.1f} %, mean {:+.1f} %", r.rows, r.mape_percent,
                                   r.mean_error_percent);
}

nlohmann::ordered_json nearest_json(const NearestCheckedRun& n) {
  return {{"what", n.what},
          {"run", run_json(n.run)},
          {"this_run_parameters_b", n.parameters_b},
          {"this_run_gpus", n.gpus}};
}

// Adds one layout's rows to a sum over rows (MAPE and mean summed times rows; divided at the end).
void add_rows(const CheckedRun& from, CheckedRun* to) {
  to->rows += from.rows;
  to->mape_percent += from.mape_percent * from.rows;
  to->mean_error_percent += from.mean_error_percent * from.rows;
}

void average_rows(CheckedRun* sum) {
  if (sum->rows == 0) return;
  sum->mape_percent /= sum->rows;
  sum->mean_error_percent /= sum->rows;
}

}  // namespace

ValidationEvidence validation_evidence(const HardwareConfiguration& configuration) {
  ValidationEvidence evidence;
  evidence.configuration = configuration;
  for (const nlohmann::json& c : evidence_configurations()) {
    if (same_configuration(configuration_of(c), configuration)) {
      append_checks(c.at("checks"), &evidence.checks);
    }
  }
  return evidence;
}

std::optional<NearestCheckedRun> nearest_checked_run(const ValidationEvidence& evidence,
                                                     double total_parameters, int gpus) {
  const double parameters_b = total_parameters / 1e9;
  if (!(parameters_b > 0) || gpus <= 0) return std::nullopt;
  std::optional<NearestCheckedRun> nearest;
  double best = std::numeric_limits<double>::infinity();
  for (const ValidationCheck& check : evidence.checks) {
    for (const CheckedRun& run : check.runs) {
      const double distance = run_distance(parameters_b, gpus, run);
      if (distance < best) {  // the first of equals: the evidence file's order
        best = distance;
        nearest = NearestCheckedRun{check.what, run, parameters_b, gpus};
      }
    }
  }
  return nearest;
}

std::string layout_kind(int tp, int pp, int gpus, int domain_gpus) {
  const std::string tensor = tp <= 1             ? "no TP"
                             : tp < domain_gpus  ? "TP smaller than a scale-up domain"
                             : tp == domain_gpus ? "TP a whole scale-up domain"
                                                 : "TP across scale-up domains";
  const std::string pipeline = pp <= 1               ? "no pipeline"
                               : gpus <= domain_gpus ? "pipeline stages inside one scale-up domain"
                                                     : "pipeline stages across scale-up domains";
  return tensor + ", " + pipeline;
}

std::optional<LayoutKindEvidence> same_layout_kind(const ValidationEvidence& evidence,
                                                   const std::string& kind) {
  // Per model and GPU count, in (size, GPUs, name) order as the evidence file sorts its runs.
  std::map<std::tuple<double, int, std::string>, CheckedRun> runs;
  CheckedRun all;
  double worst = 0;
  for (const ValidationCheck& check : evidence.checks) {
    for (const CheckedLayout& l : check.layouts) {
      if (layout_kind(l.tp, l.pp, l.nodes * l.gpus_per_node, l.scale_up_domain_gpus) != kind) {
        continue;
      }
      CheckedRun& run = runs[{l.run.parameters_b, l.run.gpus, l.run.run}];
      run.run = l.run.run;
      run.parameters_b = l.run.parameters_b;
      run.gpus = l.run.gpus;
      add_rows(l.run, &run);
      add_rows(l.run, &all);
      if (std::abs(l.worst_percent) > std::abs(worst)) worst = l.worst_percent;
    }
  }
  if (all.rows == 0) return std::nullopt;
  average_rows(&all);
  LayoutKindEvidence out{kind, all.rows, all.mape_percent, all.mean_error_percent, worst, {}};
  for (auto& [key, run] : runs) {
    average_rows(&run);
    out.runs.push_back(run);
  }
  return out;
}

std::string describe_nearest(const NearestCheckedRun& n) {
  const CheckedRun& r = n.run;
  return fmt::format(
      "{} on {} GPUs ({}): {}; this run: {:.4g}B parameters on {} GPUs ({:.2g}x the model, "
      "{:.2g}x the GPUs)",
      r.run, r.gpus, n.what, run_errors(r), n.parameters_b, n.gpus, n.parameters_b / r.parameters_b,
      static_cast<double>(n.gpus) / r.gpus);
}

std::string describe_same_layout_kind(const ValidationEvidence& evidence) {
  if (evidence.layout_kind.empty()) return "";
  const std::string head = fmt::format("  same kind of layout ({})", evidence.layout_kind);
  if (!evidence.same_layout_kind) return head + ": no checked row\n";
  const LayoutKindEvidence& k = *evidence.same_layout_kind;
  std::string out =
      fmt::format("{}: {} row{}, MAPE {:.1f} %, mean {:+.1f} %, worst {:+.1f} %\n", head, k.rows,
                  k.rows == 1 ? "" : "s", k.mape_percent, k.mean_error_percent, k.worst_percent);
  // The runs nearest this one first, as nearest_checked_run measures it, a few of them.
  std::vector<CheckedRun> runs = k.runs;
  if (evidence.nearest) {
    const NearestCheckedRun& n = *evidence.nearest;
    std::stable_sort(runs.begin(), runs.end(), [&](const CheckedRun& a, const CheckedRun& b) {
      return run_distance(n.parameters_b, n.gpus, a) < run_distance(n.parameters_b, n.gpus, b);
    });
  }
  const size_t shown = std::min(runs.size(), kLayoutKindRunsShown);
  for (size_t i = 0; i < shown; ++i) {
    out += fmt::format("    {} on {} GPUs: {}\n", runs[i].run, runs[i].gpus, run_errors(runs[i]));
  }
  if (runs.size() > shown) {
    const size_t more = runs.size() - shown;
    out += fmt::format("    and {} run{} further from this one (report.json lists them)\n", more,
                       more == 1 ? "" : "s");
  }
  return out;
}

nlohmann::ordered_json validation_evidence_json(const ValidationEvidence& v) {
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const ValidationCheck& c : v.checks) {
    checks.push_back({{"what", c.what},
                      {"rows", c.rows},
                      {"mape_percent", c.mape_percent},
                      {"worst_percent", c.worst_percent},
                      {"in_sample", c.in_sample}});
  }
  return {{"hardware_preset", v.configuration.preset},
          {"calibration", v.configuration.calibration},
          {"sustained_clock_ratio", v.configuration.sustained_clock_ratio},
          {"training_dtype", v.configuration.training_dtype},
          {"model_kind", v.configuration.model_kind},
          {"checks", std::move(checks)},
          {"own_model_fields", v.own_model_fields},
          {"nearest_run", v.nearest ? nearest_json(*v.nearest) : nlohmann::ordered_json()},
          {"layout_kind", v.layout_kind},
          {"same_layout_kind",
           v.same_layout_kind ? layout_kind_json(*v.same_layout_kind) : nlohmann::ordered_json()}};
}

ValidationEvidence validation_evidence_from_json(const nlohmann::json& validation) {
  ValidationEvidence evidence;
  evidence.configuration = configuration_of(validation);
  append_checks(validation.at("checks"), &evidence.checks);
  if (validation.contains("own_model_fields")) {
    evidence.own_model_fields = validation.at("own_model_fields").get<std::vector<std::string>>();
  }
  if (validation.contains("nearest_run") && !validation.at("nearest_run").is_null()) {
    evidence.nearest = nearest_of(validation.at("nearest_run"));
  }
  if (validation.contains("layout_kind")) {
    evidence.layout_kind = validation.at("layout_kind").get<std::string>();
  }
  if (validation.contains("same_layout_kind") && !validation.at("same_layout_kind").is_null()) {
    evidence.same_layout_kind = layout_kind_of(validation.at("same_layout_kind"));
  }
  return evidence;
}

std::string checks_summary(const ValidationEvidence& evidence) {
  if (evidence.checks.empty()) return "no rows";
  int rows = 0;
  double low = evidence.checks.front().mape_percent, high = low;
  for (const ValidationCheck& c : evidence.checks) {
    rows += c.rows;
    low = std::min(low, c.mape_percent);
    high = std::max(high, c.mape_percent);
  }
  const std::string mape =
      low == high ? fmt::format("{:.2f} %", low) : fmt::format("{:.2f}-{:.2f} %", low, high);
  return fmt::format("{} row{} in {} table{}, MAPE {}", rows, rows == 1 ? "" : "s",
                     evidence.checks.size(), evidence.checks.size() == 1 ? "" : "s", mape);
}

std::string validation_summary(const ValidationEvidence& evidence) {
  if (evidence.checks.empty()) return "no row of the README's accuracy table checks it";
  const size_t own = evidence.own_model_fields.size();
  const std::string nearest =
      evidence.nearest
          ? fmt::format("; nearest checked run {} on {} GPUs, {}", evidence.nearest->run.run,
                        evidence.nearest->run.gpus, run_errors(evidence.nearest->run))
          : "";
  std::string kind;
  if (evidence.same_layout_kind) {
    const LayoutKindEvidence& k = *evidence.same_layout_kind;
    kind = fmt::format("; {}: {} rows, MAPE {:.1f} %, mean {:+.1f} %", k.kind, k.rows,
                       k.mape_percent, k.mean_error_percent);
  } else if (!evidence.layout_kind.empty()) {
    kind = fmt::format("; {}: no checked row", evidence.layout_kind);
  }
  return fmt::format("checked: {}{}{}{}", checks_summary(evidence),
                     own == 0 ? ""
                              : fmt::format(" (the scenario sets {} model field{} itself)", own,
                                            own == 1 ? "" : "s"),
                     nearest, kind);
}

std::vector<HardwareConfiguration> validated_configurations() {
  std::vector<HardwareConfiguration> out;
  for (const nlohmann::json& c : evidence_configurations()) out.push_back(configuration_of(c));
  return out;
}

std::vector<ValidationEvidence> same_preset_evidence(const HardwareConfiguration& configuration) {
  std::vector<ValidationEvidence> out;
  if (configuration.preset.empty()) return out;
  for (const HardwareConfiguration& c : validated_configurations()) {
    if (c.preset == configuration.preset && !same_configuration(c, configuration)) {
      out.push_back(validation_evidence(c));
    }
  }
  return out;
}

std::string describe_configuration(const HardwareConfiguration& c) {
  const std::string hardware =
      c.preset.empty() ? "hardware without a preset" : fmt::format("the {} preset", c.preset);
  return fmt::format("{}{} (sustained_clock_ratio {:.4g}) in {}{}", hardware,
                     c.calibration.empty() ? "" : " with " + c.calibration, c.sustained_clock_ratio,
                     c.training_dtype == "16-bit" ? "FP16 or BF16" : c.training_dtype,
                     c.model_kind == "dense" ? "" : ", " + c.model_kind + " models");
}

}  // namespace racksim::analysis
