// How far to trust a predicted step: the rows of racksim's validation (README, "How accurate it
// is") that the scenario's hardware configuration was checked on, with their errors.
//
// The rows are data/validation-evidence.json, which scripts/accuracy.py writes from the same
// results files as the README's table and CMake compiles in. A configuration is a hardware
// preset, the calibration file the scenario includes (by file name), the clock ratio its
// FLOP-bound kernels run at and the training dtype (FP16 and BF16 share one class: one Tensor
// Core rate): the figures hold for the preset as shipped, not for fields a scenario changes
// beyond those.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace racksim::analysis {

struct HardwareConfiguration {
  std::string preset;                // hardware.preset ("dgx-h100"); empty for hardware without one
  std::string calibration;           // the calibration file's name, without its folder; empty: none
  double sustained_clock_ratio = 1;  // hardware.compute.sustained_clock_ratio as resolved
  std::string training_dtype;        // "16-bit" (FP16 or BF16), "FP8" or "FP32"
};

// One table's rows for a configuration: predicted / measured step time - 1 over them.
struct ValidationCheck {
  std::string what;  // the runs, as the README's table names them
  int rows = 0;
  double mape_percent = 0;
  double worst_percent = 0;  // signed
  bool in_sample = false;    // the configuration's fitted terms saw these rows
};

struct ValidationEvidence {
  HardwareConfiguration configuration;
  std::vector<ValidationCheck> checks;  // empty: nothing in the validation checks it
  // Compute, GPU and collective fields the scenario sets itself: the rows checked the
  // configuration with their own scenarios' values of these, not necessarily the run's.
  std::vector<std::string> own_model_fields;
};

// The checks of `configuration` (the clock ratio compared to within 1e-6).
ValidationEvidence validation_evidence(const HardwareConfiguration& configuration);

// Every configuration the compiled-in evidence holds, in its order.
std::vector<HardwareConfiguration> validated_configurations();

// The evidence a report carries, from its report.json `validation` object (the same keys as one
// configuration of the evidence file, with its checks).
ValidationEvidence validation_evidence_from_json(const nlohmann::json& validation);

// One line for a table of runs: "checked: 16 rows in 2 tables, MAPE 4.53-5.53 %", or that no
// row checks it.
std::string validation_summary(const ValidationEvidence& evidence);

// "the dgx-h100 preset (sustained_clock_ratio 0.862) in FP8"; "... with <calibration file> ...".
std::string describe_configuration(const HardwareConfiguration& configuration);

}  // namespace racksim::analysis
