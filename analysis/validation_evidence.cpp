#include "analysis/validation_evidence.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace racksim::analysis {

namespace {

constexpr const char* kValidationEvidenceJson =
#include "analysis/validation_evidence.inc"
    ;

HardwareConfiguration configuration_of(const nlohmann::json& c) {
  return {c.at("hardware_preset").get<std::string>(), c.at("calibration").get<std::string>(),
          c.at("sustained_clock_ratio").get<double>(), c.at("training_dtype").get<std::string>()};
}

CheckedRun run_of(const nlohmann::json& r) {
  return {r.at("run").get<std::string>(),
          r.at("parameters_b").get<double>(),
          r.at("gpus").get<int>(),
          r.at("rows").get<int>(),
          r.at("mape_percent").get<double>(),
          r.at("mean_error_percent").get<double>()};
}

ValidationCheck check_of(const nlohmann::json& c) {
  ValidationCheck check{c.at("what").get<std::string>(),    c.at("rows").get<int>(),
                        c.at("mape_percent").get<double>(), c.at("worst_percent").get<double>(),
                        c.at("in_sample").get<bool>(),      {}};
  if (c.contains("runs")) {
    for (const nlohmann::json& r : c.at("runs")) check.runs.push_back(run_of(r));
  }
  return check;
}

NearestCheckedRun nearest_of(const nlohmann::json& n) {
  return {n.at("what").get<std::string>(), run_of(n.at("run")),
          n.at("this_run_parameters_b").get<double>(), n.at("this_run_gpus").get<int>()};
}

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
         a.training_dtype == b.training_dtype &&
         std::abs(a.sustained_clock_ratio - b.sustained_clock_ratio) < 1e-6;
}

// "error -0.8 %" for one row; "3 rows, MAPE 6.3 %, mean +3.3 %" for several.
std::string run_errors(const CheckedRun& r) {
  return r.rows == 1 ? fmt::format("error {:+.1f} %", r.mean_error_percent)
                     : fmt::format("{} rows, MAPE {:.1f} %, mean {:+.1f} %", r.rows, r.mape_percent,
                                   r.mean_error_percent);
}

nlohmann::ordered_json nearest_json(const NearestCheckedRun& n) {
  const CheckedRun& r = n.run;
  return {{"what", n.what},
          {"run",
           {{"run", r.run},
            {"parameters_b", r.parameters_b},
            {"gpus", r.gpus},
            {"rows", r.rows},
            {"mape_percent", r.mape_percent},
            {"mean_error_percent", r.mean_error_percent}}},
          {"this_run_parameters_b", n.parameters_b},
          {"this_run_gpus", n.gpus}};
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

std::string describe_nearest(const NearestCheckedRun& n) {
  const CheckedRun& r = n.run;
  return fmt::format(
      "{} on {} GPUs ({}): {}; this run: {:.4g}B parameters on {} GPUs ({:.2g}x the model, "
      "{:.2g}x the GPUs)",
      r.run, r.gpus, n.what, run_errors(r), n.parameters_b, n.gpus, n.parameters_b / r.parameters_b,
      static_cast<double>(n.gpus) / r.gpus);
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
          {"checks", std::move(checks)},
          {"own_model_fields", v.own_model_fields},
          {"nearest_run", v.nearest ? nearest_json(*v.nearest) : nlohmann::ordered_json()}};
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
  return fmt::format("{} rows in {} table{}, MAPE {}", rows, evidence.checks.size(),
                     evidence.checks.size() == 1 ? "" : "s", mape);
}

std::string validation_summary(const ValidationEvidence& evidence) {
  if (evidence.checks.empty()) return "no row of the README's accuracy table checks it";
  const size_t own = evidence.own_model_fields.size();
  const std::string nearest =
      evidence.nearest
          ? fmt::format("; nearest checked run {} on {} GPUs, {}", evidence.nearest->run.run,
                        evidence.nearest->run.gpus, run_errors(evidence.nearest->run))
          : "";
  return fmt::format("checked: {}{}{}", checks_summary(evidence),
                     own == 0 ? ""
                              : fmt::format(" (the scenario sets {} model field{} itself)", own,
                                            own == 1 ? "" : "s"),
                     nearest);
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
  return fmt::format("{}{} (sustained_clock_ratio {:.4g}) in {}", hardware,
                     c.calibration.empty() ? "" : " with " + c.calibration, c.sustained_clock_ratio,
                     c.training_dtype == "16-bit" ? "FP16 or BF16" : c.training_dtype);
}

}  // namespace racksim::analysis
