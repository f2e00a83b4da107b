// `racksim calibrate`: fits scenario parameters (efficiencies of the compute model, link
// efficiencies...) to measured step times, and reports how well the fit predicts points it did
// not see.
//
// The measured CSV: a header row, then one row per measured run. Columns named like scenario
// fields ("layout.tp", "training.micro_batch_size", "model.hidden_size") are overrides applied
// to the base scenario for that row; `measured_step_time_s` (or `measured_step_time_ms`) is the
// measured step time; an optional `group` column names groups (e.g. the model size) for
// leave-one-group-out checks and per-group rank correlations; `note` columns are ignored.
// Lines starting with '#' are comments.
//
// Every evaluation of the fit simulates every point in a child process (`racksim run
// --report-only`), `jobs` at a time; the number of evaluations is bounded.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analysis/calibration_fit.h"
#include "analysis/measurement_floor.h"

namespace racksim::app {

struct MeasuredPoint {
  std::vector<std::string> overrides;  // "layout.tp=2", ...
  double step_time_s = 0;
  std::string group;
  std::string path;  // the CSV file
  int line = 0;      // in it
};

struct MeasuredSet {
  std::string path;  // the CSV file, or the files joined by ", "
  std::vector<MeasuredPoint> points;
  bool has_groups = false;
  bool several_files = false;
};

// Throws InputError naming the file and line for a malformed CSV.
MeasuredSet read_measured_csv(const std::string& path);
// Several files as one set, their rows in order; either every file has a group column or none.
MeasuredSet read_measured_csvs(const std::vector<std::string>& paths);
// Where a point was read: its line, and its file's name when the set holds several files.
std::string point_source(const MeasuredSet& set, const MeasuredPoint& point);

struct CalibrationSpec {
  std::string base;  // scenario file
  std::vector<std::string> base_overrides;
  MeasuredSet measured;
  std::vector<std::string> params;  // field paths under hardware.
  int jobs = 1;
  int max_evaluations = 40;
  int holdout_max_evaluations = 20;
  analysis::FitLoss loss = analysis::FitLoss::kSoftL1Log;
  std::string holdout = "auto";  // auto, none, loo, group, largest, kfold:K
  // Fit on every Nth row only (rows 0, N, 2N, ... in file order), each held-out refit on
  // every Nth of its training rows; predictions cover every row. 1: fit on all rows.
  int fit_every = 1;
};

struct CalibrationResult {
  std::vector<analysis::FitParameter> params;
  analysis::FitResult fit;
  std::vector<double> measured;
  analysis::ErrorSummary initial;  // the base scenario's values, before fitting
  std::vector<double> initial_predicted;
  analysis::ErrorSummary in_sample;              // over the fitted rows
  std::vector<double> predicted;                 // every row, with the fitted values
  analysis::ErrorSummary not_fitted;             // the rows --fit-every left out (0 points: none)
  std::string holdout;                           // what was held out, in words
  std::vector<double> held_out_predicted;        // per point; empty when no held-out check ran
                                                 // (0 for a point no fold held out)
  std::vector<std::vector<double>> fold_values;  // each held-out fold's fitted values
  analysis::ErrorSummary held_out;
  // The floor under any model of kernels and collectives (analysis/measurement_floor.h): rows
  // of the measurements that contradict every such model.
  analysis::MicroBatchFloor floor;
  // --floor-only: the same with the step's own costs as each row's framework runs them
  // (analysis::FloorOptions::framework_step_costs); families 0 otherwise.
  analysis::MicroBatchFloor framework_floor;
  // Per point, its kind of layout (analysis::layout_kind): the errors are split by it too.
  std::vector<std::string> layout_kinds;
  std::vector<std::string> warnings;
  int evaluations = 0;  // fit evaluations, all folds together
};

// Checks every point's scenario in process first (InputError naming the CSV line).
CalibrationResult calibrate(const CalibrationSpec& spec,
                            const std::function<void(const std::string&)>& progress);

std::string calibration_report(const CalibrationSpec& spec, const CalibrationResult& result);

// Whether the fit used measured row `row` (file order): rows 0, N, 2N, ... with --fit-every N.
bool fitted_on(const CalibrationSpec& spec, size_t row);

// `racksim calibrate --floor-only`: the floor the measurements put under any model of kernels
// and collectives, and the rows that set it (analysis/measurement_floor.h). Loads and checks
// every row's scenario; simulates nothing and fits nothing (spec.params may be empty). The
// result holds the measured times and the two floors alone.
CalibrationResult measurement_floor(const CalibrationSpec& spec);
std::string measurement_floor_report(const CalibrationSpec& spec, const CalibrationResult& floor);

// Within each group (the CSV's group column; "" for one unnamed group), over the points whose
// value is positive (a point no fold held out has none): Spearman's rank correlation of `values`
// with `reference`, and the error of `values` against it. Ordered by the group's name.
struct GroupRank {
  double spearman = 0;
  size_t points = 0;
};
std::map<std::string, GroupRank> rank_by_group(const CalibrationSpec& spec,
                                               const std::vector<double>& values,
                                               const std::vector<double>& reference);
std::map<std::string, analysis::ErrorSummary> errors_by_group(const CalibrationSpec& spec,
                                                              const std::vector<double>& values,
                                                              const std::vector<double>& reference);

// What the calibration file records besides the values (sources and errors), as comment lines.
std::vector<std::string> calibration_comment(const CalibrationSpec& spec,
                                             const CalibrationResult& result);

}  // namespace racksim::app
