#include "analysis/validation_evidence.h"

#include <algorithm>
#include <cmath>
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

ValidationCheck check_of(const nlohmann::json& c) {
  return {c.at("what").get<std::string>(), c.at("rows").get<int>(),
          c.at("mape_percent").get<double>(), c.at("worst_percent").get<double>(),
          c.at("in_sample").get<bool>()};
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

}  // namespace

ValidationEvidence validation_evidence(const HardwareConfiguration& configuration) {
  ValidationEvidence evidence{configuration, {}};
  for (const nlohmann::json& c : evidence_configurations()) {
    if (same_configuration(configuration_of(c), configuration)) {
      append_checks(c.at("checks"), &evidence.checks);
    }
  }
  return evidence;
}

ValidationEvidence validation_evidence_from_json(const nlohmann::json& validation) {
  ValidationEvidence evidence{configuration_of(validation), {}};
  append_checks(validation.at("checks"), &evidence.checks);
  if (validation.contains("own_model_fields")) {
    evidence.own_model_fields = validation.at("own_model_fields").get<std::vector<std::string>>();
  }
  return evidence;
}

std::string validation_summary(const ValidationEvidence& evidence) {
  if (evidence.checks.empty()) return "no row of the README's accuracy table checks it";
  int rows = 0;
  double low = evidence.checks.front().mape_percent, high = low;
  for (const ValidationCheck& c : evidence.checks) {
    rows += c.rows;
    low = std::min(low, c.mape_percent);
    high = std::max(high, c.mape_percent);
  }
  const std::string mape =
      low == high ? fmt::format("{:.2f} %", low) : fmt::format("{:.2f}-{:.2f} %", low, high);
  const size_t own = evidence.own_model_fields.size();
  return fmt::format("checked: {} rows in {} table{}, MAPE {}{}", rows, evidence.checks.size(),
                     evidence.checks.size() == 1 ? "" : "s", mape,
                     own == 0 ? ""
                              : fmt::format(" (the scenario sets {} model field{} itself)", own,
                                            own == 1 ? "" : "s"));
}

std::vector<HardwareConfiguration> validated_configurations() {
  std::vector<HardwareConfiguration> out;
  for (const nlohmann::json& c : evidence_configurations()) out.push_back(configuration_of(c));
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
