// How far to trust a predicted step: the rows of racksim's validation (README, "How accurate it
// is") that the scenario's hardware configuration was checked on, with their errors, the
// checked run nearest the predicted one in model size and GPU count, and the checked rows of the
// same kind of layout (where its tensor-parallel and pipeline traffic runs), whose errors differ
// more by kind than by model size on vTrain's A100 cluster (docs/validation.md).
//
// The rows are data/validation-evidence.json, which scripts/accuracy.py writes from the same
// results files as the README's table and CMake compiles in. A configuration is a hardware
// preset, the calibration file the scenario includes (by file name), the clock ratio its
// FLOP-bound kernels run at, the training dtype (FP16 and BF16 share one class: one Tensor
// Core rate) and whether the model routes its tokens to experts (an MoE step's all-to-alls and
// expert kernels are not a dense step's): the figures hold for the preset as shipped, not for
// fields a scenario changes beyond those.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace racksim::analysis {

struct HardwareConfiguration {
  std::string preset;                // hardware.preset ("dgx-h100"); empty for hardware without one
  std::string calibration;           // the calibration file's name, without its folder; empty: none
  double sustained_clock_ratio = 1;  // hardware.compute.sustained_clock_ratio as resolved
  std::string training_dtype;        // "16-bit" (FP16 or BF16), "FP8" or "FP32"
  std::string model_kind = "dense";  // "dense" or "MoE"
};

// The rows of one check that ran one model on one number of GPUs.
struct CheckedRun {
  std::string run;          // the model as its table names it: "GPT 175B"
  double parameters_b = 0;  // the size that name gives, in billions of parameters
  int gpus = 0;
  int rows = 0;  // layouts, releases or repeats of that model on those GPUs
  double mape_percent = 0;
  double mean_error_percent = 0;  // signed
};

// The rows of one check that ran one model on one number of GPUs in one layout.
struct CheckedLayout {
  CheckedRun run;  // its rows, MAPE and mean are this layout's
  int tp = 1;
  int pp = 1;
  int nodes = 1;
  int gpus_per_node = 1;
  int scale_up_domain_gpus = 1;  // the checked cluster's, whatever share of it the rows used
  double worst_percent = 0;      // signed
};

// One table's rows for a configuration: predicted / measured step time - 1 over them.
struct ValidationCheck {
  std::string what;  // the runs, as the README's table names them
  int rows = 0;
  double mape_percent = 0;
  double worst_percent = 0;            // signed
  bool in_sample = false;              // the configuration's fitted terms saw these rows
  std::vector<CheckedRun> runs;        // from the evidence file; a report.json does not repeat them
  std::vector<CheckedLayout> layouts;  // likewise
};

// The checked run closest to a predicted one in model size and GPU count, both on a log scale
// (a run of twice the parameters is as far as one on twice the GPUs).
struct NearestCheckedRun {
  std::string what;  // its check
  CheckedRun run;
  double parameters_b = 0;  // the predicted run's total parameters, in billions
  int gpus = 0;             // the predicted run's
};

// The checked rows of a configuration whose layouts are of one kind (layout_kind), over all its
// checks: their count, MAPE, signed mean and worst, and per model and GPU count.
struct LayoutKindEvidence {
  std::string kind;
  int rows = 0;
  double mape_percent = 0;
  double mean_error_percent = 0;
  double worst_percent = 0;
  std::vector<CheckedRun> runs;  // smallest model first
};

struct ValidationEvidence {
  HardwareConfiguration configuration;
  std::vector<ValidationCheck> checks;  // empty: nothing in the validation checks it
  // Compute, GPU and collective fields the scenario sets itself: the rows checked the
  // configuration with their own scenarios' values of these, not necessarily the run's.
  std::vector<std::string> own_model_fields;
  std::optional<NearestCheckedRun> nearest;            // none without checks
  std::string layout_kind;                             // the predicted run's (empty: not drawn)
  std::optional<LayoutKindEvidence> same_layout_kind;  // none: no checked row of that kind
};

// Where a layout's tensor-parallel and pipeline traffic runs, as one phrase: "TP smaller than a
// scale-up domain, pipeline stages across scale-up domains". TP: none, smaller than a scale-up
// domain (several TP groups share its switch and its NICs), a whole domain, or across domains;
// pipeline: none, inside one domain, or across domains (some stage hands its activations to
// another domain, over the scale-out network). `gpus` is the run's, `domain_gpus` the GPUs of one
// scale-up domain (a DGX server's 8, an NVL72 rack's 72).
std::string layout_kind(int tp, int pp, int gpus, int domain_gpus);

// The checked rows of `evidence` whose layouts are of `kind`; none if no check holds one.
std::optional<LayoutKindEvidence> same_layout_kind(const ValidationEvidence& evidence,
                                                   const std::string& kind);

// The checks of `configuration` (the clock ratio compared to within 1e-6).
ValidationEvidence validation_evidence(const HardwareConfiguration& configuration);

// The checked run of `evidence` nearest a run of `total_parameters` on `gpus`; none if no check
// names its runs.
std::optional<NearestCheckedRun> nearest_checked_run(const ValidationEvidence& evidence,
                                                     double total_parameters, int gpus);

// "GPT 145.6B on 1536 GPUs (Narayanan et al. ...): error -0.8 %; this run: 174.6B parameters on
// 1024 GPUs (1.2x the model, 0.67x the GPUs)".
std::string describe_nearest(const NearestCheckedRun& nearest);

// Every configuration the compiled-in evidence holds, in its order.
std::vector<HardwareConfiguration> validated_configurations();

// The checked configurations of the same hardware preset as `configuration`, other than it, with
// their checks: where to look when no row checks the configuration itself (a BF16 run on a
// preset checked in FP8). None for hardware without a preset.
std::vector<ValidationEvidence> same_preset_evidence(const HardwareConfiguration& configuration);

// A report.json's `validation` object: the configuration, its checks without their runs, the
// model fields the scenario sets itself and the nearest checked run (null without checks).
nlohmann::ordered_json validation_evidence_json(const ValidationEvidence& evidence);

// The evidence a report carries, from its report.json `validation` object (the same keys as one
// configuration of the evidence file, with its checks).
ValidationEvidence validation_evidence_from_json(const nlohmann::json& validation);

// "  same kind of layout (<kind>): 35 rows, MAPE 10.6 %, mean -9.5 %, worst -37.8 %" and a line
// per model and GPU count, the four nearest the run first (as nearest_checked_run measures it),
// or "...: no checked row"; empty where the kind is not drawn.
std::string describe_same_layout_kind(const ValidationEvidence& evidence);

// One line for a table of runs: "checked: 16 rows in 2 tables, MAPE 4.53-5.53 %; nearest
// checked run Llama 3.1 405B on 1024 GPUs, 2 rows, MAPE 1.9 %, mean -1.9 %; TP a whole scale-up
// domain, pipeline stages across scale-up domains: 3 rows, MAPE 4.0 %, mean -4.0 %", or that no
// row checks it.
std::string validation_summary(const ValidationEvidence& evidence);

// "16 rows in 2 tables, MAPE 4.53-5.53 %" ("no rows" without checks).
std::string checks_summary(const ValidationEvidence& evidence);

// "the dgx-h100 preset (sustained_clock_ratio 0.862) in FP8"; "... with <calibration file> ...".
std::string describe_configuration(const HardwareConfiguration& configuration);

}  // namespace racksim::analysis
