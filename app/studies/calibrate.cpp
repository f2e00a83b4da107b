#include "app/studies/calibrate.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "analysis/report.h"
#include "app/child_process.h"
#include "app/studies/floor_report.h"
#include "app/studies/floor_rows.h"
#include "app/studies/layout_kind_errors.h"
#include "common/error.h"
#include "config/field_path.h"
#include "config/fraction_fields.h"
#include "config/scenario_loader.h"

namespace racksim::app {

namespace fs = std::filesystem;
using google::protobuf::FieldDescriptor;

namespace {

// The value of a numeric scalar field of a resolved scenario.
double numeric_field(const config::Scenario& scenario, const std::string& path) {
  const google::protobuf::Message* message = &scenario;
  const auto segments = config::split_path(path);
  for (size_t i = 0; i < segments.size(); ++i) {
    const FieldDescriptor* f = message->GetDescriptor()->FindFieldByName(segments[i]);
    if (f == nullptr || f->is_repeated()) break;
    const auto* r = message->GetReflection();
    if (i + 1 < segments.size()) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) break;
      message = &r->GetMessage(*message, f);
      continue;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE:
        return r->GetDouble(*message, f);
      case FieldDescriptor::CPPTYPE_FLOAT:
        return r->GetFloat(*message, f);
      case FieldDescriptor::CPPTYPE_INT32:
        return r->GetInt32(*message, f);
      case FieldDescriptor::CPPTYPE_INT64:
        return static_cast<double>(r->GetInt64(*message, f));
      default:
        break;
    }
  }
  throw InputError({"--params", 0, 0}, path, "not a numeric scenario field");
}

// Efficiencies live in [0.01, 1]; anything else may move a decade either way.
analysis::FitParameter parameter(const config::Scenario& base, const std::string& field) {
  if (field.rfind("hardware.", 0) != 0) {
    throw InputError({"--params", 0, 0}, field,
                     "calibration fits hardware fields (the calibration file is a hardware "
                     "section)");
  }
  analysis::FitParameter p;
  p.field = field;
  p.initial = numeric_field(base, field);
  if (!(p.initial > 0)) {
    throw InputError(
        {"--params", 0, 0}, field,
        fmt::format("starts at {}; a fitted parameter must start positive", p.initial));
  }
  // Fractions stay in [config::kMinFraction, 1], what the validator accepts; anything else
  // (seconds, counts, sizes) within ten times its start either way.
  const bool efficiency = config::is_fraction_field(field);
  p.lower = efficiency ? config::kMinFraction : p.initial / 10;
  p.upper = efficiency ? 1.0 : p.initial * 10;
  return p;
}

config::LoadedScenario load_point(const CalibrationSpec& spec, const MeasuredPoint& point,
                                  const std::vector<std::string>& extra) {
  std::vector<std::string> overrides = spec.base_overrides;
  overrides.insert(overrides.end(), point.overrides.begin(), point.overrides.end());
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return config::load_scenario(spec.base, overrides);
}

// Simulates points in child processes; one folder per point under `work`, reused.
class ChildPredictor {
 public:
  ChildPredictor(const CalibrationSpec& spec, fs::path work)
      : spec_(spec), work_(std::move(work)) {}

  std::vector<double> operator()(const std::vector<double>& values,
                                 const std::vector<size_t>& which) const {
    std::vector<ChildJob> jobs;
    for (size_t i : which) {
      ChildJob job;
      job.argv = {self_,           "run",   fs::absolute(spec_.base).string(),
                  "--report-only", "--out", dir(i).string()};
      auto add = [&](const std::string& o) {
        job.argv.push_back("--set");
        job.argv.push_back(o);
      };
      for (const auto& o : spec_.base_overrides) add(o);
      for (const auto& o : spec_.measured.points[i].overrides) add(o);
      for (size_t k = 0; k < values.size(); ++k) {
        add(fmt::format("{}={:.9g}", spec_.params[k], values[k]));
      }
      job.log = work_ / fmt::format("p{}.log", i);
      jobs.push_back(std::move(job));
    }
    std::vector<double> predicted(which.size(), 0);
    std::string failure;  // the first; thrown once every child has ended
    run_parallel(jobs, spec_.jobs, [&](size_t k, int status) {
      const fs::path report = dir(which[k]) / "report.json";
      if (status != 0 || !fs::exists(report)) {
        if (failure.empty()) {
          const MeasuredPoint& point = spec_.measured.points[which[k]];
          failure = fmt::format("calibrate: simulating {} line {} failed (exit {}):\n{}",
                                point.path, point.line, status, read_text_file(jobs[k].log));
        }
        return;
      }
      predicted[k] = nlohmann::json::parse(read_text_file(report)).at("step_time_s").get<double>();
      fs::remove(report);  // a stale report must never be read as the next one
    });
    if (!failure.empty()) throw std::runtime_error(failure);
    return predicted;
  }

 private:
  fs::path dir(size_t point) const { return work_ / fmt::format("p{}", point); }

  const CalibrationSpec& spec_;
  fs::path work_;
  std::string self_ = self_executable();
};

// Extrapolation: one fold, the rows of the group whose name reads as the largest number (model
// sizes such as "3.6B" and "18.4B"); the fit sees only the smaller groups.
std::vector<std::vector<size_t>> largest_group_fold(const CalibrationSpec& spec,
                                                    std::string* described) {
  const auto& points = spec.measured.points;
  auto size_of = [](const std::string& group) { return std::strtod(group.c_str(), nullptr); };
  std::string largest;
  for (const auto& p : points) {
    if (largest.empty() || size_of(p.group) > size_of(largest)) largest = p.group;
  }
  std::vector<size_t> fold;
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].group == largest) fold.push_back(i);
  }
  if (fold.size() == points.size()) return {};
  *described = fmt::format("leave the largest group out: fit without {}, predict it", largest);
  return {fold};
}

std::vector<std::vector<size_t>> folds_for(const CalibrationSpec& spec, std::string* described) {
  const size_t n = spec.measured.points.size();
  std::string mode = spec.holdout;
  if (mode == "auto") {
    std::map<std::string, int> groups;
    for (const auto& p : spec.measured.points) ++groups[p.group];
    mode = spec.measured.has_groups && groups.size() >= 2 ? "group" : n <= 12 ? "loo" : "kfold:5";
  }
  if (mode == "none") return {};
  std::vector<std::string> groups;
  int k = 0;
  if (mode == "group") {
    if (!spec.measured.has_groups) {
      throw InputError({"--holdout", 0, 0}, "--holdout", "group needs a group column in the CSV");
    }
    for (const auto& p : spec.measured.points) groups.push_back(p.group);
    *described = "leave one group out";
  } else if (mode == "largest") {
    if (!spec.measured.has_groups) {
      throw InputError({"--holdout", 0, 0}, "--holdout", "largest needs a group column in the CSV");
    }
    return largest_group_fold(spec, described);
  } else if (mode == "loo") {
    *described = "leave one out";
  } else if (mode.rfind("kfold:", 0) == 0) {
    k = std::max(2, std::atoi(mode.c_str() + 6));
    *described = fmt::format("{}-fold (contiguous rows)", k);
  } else {
    throw InputError(
        {"--holdout", 0, 0}, "--holdout",
        fmt::format("'{}': expected auto, none, loo, group, largest or kfold:K", mode));
  }
  auto folds = analysis::holdout_folds(n, groups, k);
  if (folds.size() < 2) {
    described->clear();
    return {};
  }
  return folds;
}

// Every measured row's scenario loads and validates before anything is simulated. Returns the
// rows as the measurement floor sees them.
std::vector<analysis::MicroBatchRow> check_measured_rows(const CalibrationSpec& spec,
                                                         CalibrationResult& result) {
  std::vector<analysis::MicroBatchRow> rows;
  for (const auto& point : spec.measured.points) {
    try {
      const config::Scenario scenario = load_point(spec, point, {}).scenario;
      const TrainingPlan plan = resolve_training_plan(scenario);
      rows.push_back(floor_row(point, scenario, plan));
      result.layout_kinds.push_back(analysis::plan_layout_kind(plan));
    } catch (const InputError& e) {
      throw InputError({point.path, point.line, 0}, "",
                       fmt::format("this row's scenario is invalid: {}", e.what()));
    }
    result.measured.push_back(point.step_time_s);
  }
  result.floor = analysis::micro_batch_floor(rows);
  const size_t n = result.measured.size();
  if (analysis::over_parameterised(result.params.size(), n)) {
    result.warnings.push_back(fmt::format(
        "{} parameters for {} measured points: the fit can match every point exactly whatever "
        "the model's faults; only the held-out error says whether it is right",
        result.params.size(), n));
  }
  return rows;
}

size_t fit_stride(const CalibrationSpec& spec) {
  return static_cast<size_t>(std::max(1, spec.fit_every));
}

// The rows of `points` that --fit-every fits on.
std::vector<size_t> every_nth(size_t points, size_t n) {
  std::vector<size_t> rows;
  for (size_t i = 0; i < points; i += n) rows.push_back(i);
  return rows;
}

// The rows each held-out refit fits on: the fitted rows outside its fold. Checked before anything
// is simulated: a fold that leaves no row is the command line's error.
std::vector<std::vector<size_t>> training_rows(const std::vector<std::vector<size_t>>& folds,
                                               const std::vector<size_t>& fitted) {
  std::vector<std::vector<size_t>> rows;
  for (size_t f = 0; f < folds.size(); ++f) {
    std::vector<size_t> train;
    for (size_t i : fitted) {
      if (std::find(folds[f].begin(), folds[f].end(), i) == folds[f].end()) train.push_back(i);
    }
    if (train.empty()) {
      throw InputError({"--fit-every", 0, 0}, "--fit-every",
                       fmt::format("held-out fold {} leaves no row to fit on", f + 1));
    }
    rows.push_back(std::move(train));
  }
  return rows;
}

// Refits without each fold and predicts the fold: the error on points the fit never saw.
void fit_held_out(const std::vector<std::vector<size_t>>& folds,
                  const std::vector<std::vector<size_t>>& training, const ChildPredictor& predict,
                  analysis::FitOptions options, CalibrationResult& result,
                  const std::function<void(const std::string&)>& progress) {
  const size_t n = result.measured.size();
  result.held_out_predicted.assign(n, 0);
  for (size_t f = 0; f < folds.size(); ++f) {
    const std::vector<size_t>& train = training[f];
    if (analysis::over_parameterised(result.params.size(), train.size()) && f == 0) {
      result.warnings.push_back(fmt::format("held-out fits see {} points for {} parameters",
                                            train.size(), result.params.size()));
    }
    const auto fold_fit = analysis::fit_parameters(result.params, result.measured, train, predict,
                                                   options, result.fit.values);
    result.evaluations += fold_fit.evaluations;
    result.fold_values.push_back(fold_fit.values);
    const auto predicted = predict(fold_fit.values, folds[f]);
    for (size_t k = 0; k < folds[f].size(); ++k) {
      result.held_out_predicted[folds[f][k]] = predicted[k];
    }
    progress(fmt::format("held-out fold {}/{} done", f + 1, folds.size()));
  }
  // Only the points some fold held out (leave-largest-out holds out one group).
  std::vector<double> predicted, measured;
  for (size_t i = 0; i < n; ++i) {
    if (result.held_out_predicted[i] <= 0) continue;
    predicted.push_back(result.held_out_predicted[i]);
    measured.push_back(result.measured[i]);
  }
  result.held_out = analysis::error_summary(predicted, measured);
}

// The fit's errors: over the rows it was fitted on (every fit_every-th), and with --fit-every over
// every row, which costs one more simulation of the rows it did not see.
void summarise_fit(const CalibrationSpec& spec, const ChildPredictor& predict,
                   const std::vector<size_t>& all, CalibrationResult& result) {
  std::vector<double> fitted_measured;
  for (size_t i : every_nth(all.size(), fit_stride(spec))) {
    fitted_measured.push_back(result.measured[i]);
  }
  result.in_sample = analysis::error_summary(result.fit.predicted, fitted_measured);
  if (fit_stride(spec) == 1) {
    result.predicted = result.fit.predicted;
    return;
  }
  result.predicted = predict(result.fit.values, all);
  std::vector<double> other_predicted, other_measured;
  for (size_t i = 0; i < all.size(); ++i) {
    if (fitted_on(spec, i)) continue;
    other_predicted.push_back(result.predicted[i]);
    other_measured.push_back(result.measured[i]);
  }
  result.not_fitted = analysis::error_summary(other_predicted, other_measured);
}

}  // namespace

bool fitted_on(const CalibrationSpec& spec, size_t row) {
  return row % fit_stride(spec) == 0;
}

CalibrationResult calibrate(const CalibrationSpec& spec,
                            const std::function<void(const std::string&)>& progress) {
  CalibrationResult result;
  const config::Scenario base = config::load_scenario(spec.base, spec.base_overrides).scenario;
  for (const auto& field : spec.params) result.params.push_back(parameter(base, field));
  check_measured_rows(spec, result);
  const size_t n = result.measured.size();
  const std::vector<size_t> fitted = every_nth(n, fit_stride(spec));
  const auto folds = folds_for(spec, &result.holdout);
  const auto training = training_rows(folds, fitted);
  const ScopedTempDir work("racksim-calibrate");
  const ChildPredictor predict(spec, work.path());
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  std::vector<double> initial_values;
  for (const auto& p : result.params) initial_values.push_back(p.initial);
  result.initial_predicted = predict(initial_values, all);
  result.initial = analysis::error_summary(result.initial_predicted, result.measured);
  progress(
      fmt::format("before fitting: mean |error| {:.1f} %", 100 * result.initial.mean_abs_relative));
  analysis::FitOptions options;
  options.max_evaluations = spec.max_evaluations;
  options.loss = spec.loss;
  result.fit = analysis::fit_parameters(result.params, result.measured, fitted, predict, options);
  result.evaluations = result.fit.evaluations;
  summarise_fit(spec, predict, all, result);
  progress(fmt::format("fitted in {} evaluations: mean |error| {:.1f} %", result.fit.evaluations,
                       100 * result.in_sample.mean_abs_relative));
  if (!folds.empty()) {
    options.max_evaluations = spec.holdout_max_evaluations;
    fit_held_out(folds, training, predict, options, result, progress);
  }
  return result;
}

namespace {

// Per group of the measured points (analysis::group_by_key).
analysis::GroupedValues by_group(const CalibrationSpec& spec, const std::vector<double>& values,
                                 const std::vector<double>& reference) {
  std::vector<std::string> groups;
  for (const auto& point : spec.measured.points) groups.push_back(point.group);
  return analysis::group_by_key(groups, values, reference);
}

}  // namespace

std::map<std::string, GroupRank> rank_by_group(const CalibrationSpec& spec,
                                               const std::vector<double>& values,
                                               const std::vector<double>& reference) {
  std::map<std::string, GroupRank> ranks;
  for (const auto& [name, g] : by_group(spec, values, reference)) {
    ranks[name] = {analysis::rank_correlation(g.first, g.second), g.first.size()};
  }
  return ranks;
}

std::map<std::string, analysis::ErrorSummary> errors_by_group(
    const CalibrationSpec& spec, const std::vector<double>& values,
    const std::vector<double>& reference) {
  std::map<std::string, analysis::ErrorSummary> errors;
  for (const auto& [name, g] : by_group(spec, values, reference)) {
    errors[name] = analysis::error_summary(g.first, g.second);
  }
  return errors;
}

namespace {

std::string errors_line(const char* what, const analysis::ErrorSummary& e) {
  return fmt::format(
      "  {:<30} mean |error| {:>6.2f} %   max {:>6.2f} %   rms log {:.4f}  ({} points)\n", what,
      100 * e.mean_abs_relative, 100 * e.max_abs_relative, e.rms_log, e.points);
}

// Spearman's rank correlation of predicted and measured step times within each group.
std::string rank_lines(const CalibrationSpec& spec, const std::vector<double>& predicted,
                       const std::vector<double>& measured, const char* what) {
  std::string out;
  for (const auto& [name, rank] : rank_by_group(spec, predicted, measured)) {
    out += fmt::format("  rank correlation ({}) {:<14} {:+.3f}  ({} points)\n", what,
                       name.empty() ? "all" : name, rank.spearman, rank.points);
  }
  return out;
}

// How close any model can come to these measurements (analysis/measurement_floor.h).
std::string floor_lines(const CalibrationSpec& spec, const CalibrationResult& r) {
  const analysis::MicroBatchFloor& f = r.floor;
  if (f.families == 0) return "";
  const std::string siblings =
      f.sibling_pairs == 0
          ? ""
          : fmt::format(
                "; {} of {} pairs of families that differ only in the TP size inside a "
                "scale-up domain take longer with the smaller than r times its TP's work "
                "and bubble allow",
                f.sibling_pairs_broken, f.sibling_pairs);
  const std::string models =
      f.model_pairs == 0
          ? ""
          : fmt::format(
                "; {} of {} pairs of families that differ only in the model's width or depth "
                "take longer with the smaller model",
                f.model_pairs_broken, f.model_pairs);
  const bool broken = f.families_broken + f.sibling_pairs_broken + f.model_pairs_broken > 0;
  std::string out = fmt::format(
      "  measurement floor {:.2f} % mean |error| ({} points): {} of {} families of rows that "
      "differ only in the micro-batch change with it in a way no model of kernels and "
      "collectives does (without pipeline stages: slower with a larger one){}{}{}\n",
      100 * f.mean_abs_relative, r.measured.size(), f.families_broken, f.families, siblings, models,
      broken ? "; the closest such model:" : "");
  for (size_t i = 0; i < r.measured.size(); ++i) {
    if (f.closest_s[i] == r.measured[i]) continue;
    out += closest_step_line(spec, r, i, f.closest_s[i]);
  }
  for (const auto& [small, large] : f.broken_pair_rows) {
    out += fmt::format(
        "    line {}: its layout takes longer than its sibling with a larger TP (line {}) allows\n",
        point_source(spec.measured, spec.measured.points[small]),
        point_source(spec.measured, spec.measured.points[large]));
  }
  for (const auto& [small, large] : f.broken_model_rows) {
    out += fmt::format("    line {}: its model takes longer than the larger one of line {}\n",
                       point_source(spec.measured, spec.measured.points[small]),
                       point_source(spec.measured, spec.measured.points[large]));
  }
  if (broken) out += floor_per_group_line(spec, f.closest_s, r.measured);
  // The model's own error, the measurements' inconsistency taken out: the fit against those
  // closest times in place of the rows that break the property.
  if (broken && r.predicted.size() == f.closest_s.size()) {
    out += fmt::format("    the fit against these closest times instead: mean |error| {:.2f} %\n",
                       100 * analysis::error_summary(r.predicted, f.closest_s).mean_abs_relative);
    out += rank_lines(spec, r.predicted, f.closest_s, "against the closest times");
  }
  return out;
}

}  // namespace

CalibrationResult measurement_floor(const CalibrationSpec& spec) {
  CalibrationResult result;
  const std::vector<analysis::MicroBatchRow> rows = check_measured_rows(spec, result);
  result.framework_floor = analysis::micro_batch_floor(rows, {.framework_step_costs = true});
  return result;
}

std::string measurement_floor_report(const CalibrationSpec& spec, const CalibrationResult& result) {
  std::string out = fmt::format("Measurement floor of {} on {} ({} points)\n\n", spec.measured.path,
                                spec.base, result.measured.size());
  if (result.floor.families == 0) {
    return out + "  no two rows differ only in the micro-batch: nothing to bound\n";
  }
  return out + floor_lines(spec, result) + framework_floor_lines(spec, result);
}

// A fit whose parameters never moved a prediction fitted nothing; say so where the values are.
std::string no_effect_warning(const std::vector<analysis::FitParameter>& params, int evaluations) {
  std::vector<std::string> fields;
  for (const auto& p : params) fields.push_back(p.field);
  return fmt::format(
      "  warning: {} evaluations at different values predicted exactly the same step times, so "
      "{} act on none of these rows and the values above are the start (a term of another "
      "hardware.compute.model? Under KERNEL, gemm_half_dim shapes only GEMMs without a shape; "
      "under ROOFLINE, the gemm_sustained, split-K and cpu_launch_floor terms do nothing)",
      evaluations, fmt::join(fields, ", "));
}

std::string calibration_report(const CalibrationSpec& spec, const CalibrationResult& r) {
  std::string out = fmt::format("Calibration of {} on {} ({} points)\n\n", spec.base,
                                spec.measured.path, r.measured.size());
  out += spec.loss == analysis::FitLoss::kAbsoluteRelative
             ? "Fitted parameters (to the lowest mean |error|, --loss abs):\n"
             : "Fitted parameters:\n";
  for (size_t i = 0; i < r.params.size(); ++i) {
    out += fmt::format("  {:<40} {:>10.4g}  (was {:.4g}; bounds {:.3g} .. {:.3g})\n",
                       r.params[i].field, r.fit.values[i], r.params[i].initial, r.params[i].lower,
                       r.params[i].upper);
  }
  if (r.fit.no_effect) out += no_effect_warning(r.params, r.fit.evaluations) + "\n";
  out += fmt::format("\nErrors (predicted / measured - 1), {} simulations of the fit in all:\n",
                     r.evaluations);
  out += errors_line("before fitting", r.initial);
  out += errors_line("in sample (fitted points)", r.in_sample);
  if (r.not_fitted.points > 0) {
    out += errors_line(fmt::format("not fitted (1 row in {} fitted)", spec.fit_every).c_str(),
                       r.not_fitted);
  }
  if (!r.held_out_predicted.empty()) {
    out += errors_line(fmt::format("held out ({})", r.holdout).c_str(), r.held_out);
  } else {
    out += "  held out: not checked (--holdout none, or a single group)\n";
  }
  for (size_t f = 0; f < r.fold_values.size(); ++f) {
    std::string values;
    for (size_t i = 0; i < r.params.size(); ++i) {
      values += fmt::format(" {}={:.4g}", r.params[i].field, r.fold_values[f][i]);
    }
    out += fmt::format("  held-out fold {} fitted:{}\n", f + 1, values);
  }
  out += rank_lines(spec, r.predicted, r.measured,
                    r.not_fitted.points > 0 ? "with the fit" : "in sample");
  if (!r.held_out_predicted.empty()) {
    out += rank_lines(spec, r.held_out_predicted, r.measured, "held out");
  }
  out += layout_kind_lines(r.layout_kinds, r.predicted, r.measured,
                           r.not_fitted.points > 0 ? "with the fit" : "in sample");
  out += floor_lines(spec, r);
  out += "\nPer point (seconds):\n";
  out += fmt::format("  {:>5} {:<10} {:>10} {:>10} {:>8} {:>10} {:>8}  overrides\n", "line",
                     "group", "measured", "fitted", "error", "held out", "error");
  for (size_t i = 0; i < r.measured.size(); ++i) {
    const auto& p = spec.measured.points[i];
    std::string overrides;
    for (const auto& o : p.overrides) overrides += " " + o;
    const bool h = !r.held_out_predicted.empty() && r.held_out_predicted[i] > 0;
    out += fmt::format(
        "  {:>5} {:<10} {:>10.4g} {:>10.4g} {:>+7.1f}% {:>10} {:>8} {}\n",
        point_source(spec.measured, p), p.group, r.measured[i], r.predicted[i],
        100 * (r.predicted[i] / r.measured[i] - 1),
        h ? fmt::format("{:.4g}", r.held_out_predicted[i]) : "-",
        h ? fmt::format("{:+.1f}%", 100 * (r.held_out_predicted[i] / r.measured[i] - 1)) : "-",
        overrides);
  }
  for (const auto& w : r.warnings) out += "\nwarning: " + w + "\n";
  return out;
}

std::vector<std::string> calibration_comment(const CalibrationSpec& spec,
                                             const CalibrationResult& r) {
  std::vector<std::string> lines{
      fmt::format("fitted by racksim calibrate on {} with base {}", spec.measured.path, spec.base),
      fmt::format("{} points{}; in-sample mean |error| {:.2f} %{}", r.measured.size(),
                  spec.fit_every > 1 ? fmt::format(", 1 row in {} fitted", spec.fit_every) : "",
                  100 * r.in_sample.mean_abs_relative,
                  r.held_out_predicted.empty() ? std::string("; no held-out check")
                                               : fmt::format("; held out ({}) {:.2f} %", r.holdout,
                                                             100 * r.held_out.mean_abs_relative))};
  for (const auto& w : r.warnings) lines.push_back("warning: " + w);
  lines.push_back(
      "include it with  calibration: \"<this file>\"  in a scenario, or --set calibration=<this "
      "file>");
  return lines;
}

}  // namespace racksim::app
