#include "app/studies/calibrate_json.h"

#include <algorithm>
#include <string>

#include "app/child_process.h"
#include "app/studies/layout_kind_errors.h"

namespace racksim::app {

using Json = nlohmann::ordered_json;

namespace {

Json error_json(const analysis::ErrorSummary& e) {
  return Json{{"mean_abs_relative", e.mean_abs_relative},
              {"max_abs_relative", e.max_abs_relative},
              {"rms_log", e.rms_log},
              {"points", e.points}};
}

// Spearman's rank correlation of `values` and `reference` within each group, by group name
// ("all" for rows without a group column), as the text report gives it.
Json rank_json(const CalibrationSpec& spec, const std::vector<double>& values,
               const std::vector<double>& reference) {
  Json out = Json::object();
  for (const auto& [name, rank] : rank_by_group(spec, values, reference)) {
    out[name.empty() ? "all" : name] = Json{{"spearman", rank.spearman}, {"points", rank.points}};
  }
  return out;
}

Json parameters_json(const CalibrationResult& r) {
  Json out = Json::array();
  for (size_t i = 0; i < r.params.size(); ++i) {
    const auto& p = r.params[i];
    out.push_back(Json{{"field", p.field},
                       {"fitted", r.fit.values[i]},
                       {"initial", p.initial},
                       {"lower", p.lower},
                       {"upper", p.upper}});
  }
  return out;
}

// Each held-out fold's fitted values, {field: value}, in fold order.
Json folds_json(const CalibrationResult& r) {
  Json out = Json::array();
  for (const auto& values : r.fold_values) {
    Json fold = Json::object();
    for (size_t i = 0; i < r.params.size(); ++i) fold[r.params[i].field] = values[i];
    out.push_back(fold);
  }
  return out;
}

Json row_pairs_json(const CalibrationSpec& spec, const std::vector<std::pair<size_t, size_t>>& rows,
                    const char* first, const char* second) {
  Json out = Json::array();
  for (const auto& [a, b] : rows) {
    out.push_back(Json{{first, point_source(spec.measured, spec.measured.points[a])},
                       {second, point_source(spec.measured, spec.measured.points[b])}});
  }
  return out;
}

Json floor_json(const CalibrationSpec& spec, const CalibrationResult& r) {
  const analysis::MicroBatchFloor& f = r.floor;
  Json out{{"mean_abs_relative", f.mean_abs_relative},
           {"families", f.families},
           {"families_broken", f.families_broken},
           {"tp_sibling_pairs", f.sibling_pairs},
           {"tp_sibling_pairs_broken", f.sibling_pairs_broken},
           {"tp_sibling_rows_broken",
            row_pairs_json(spec, f.broken_pair_rows, "smaller_tp_row", "larger_tp_row")},
           {"model_pairs", f.model_pairs},
           {"model_pairs_broken", f.model_pairs_broken},
           {"model_rows_broken",
            row_pairs_json(spec, f.broken_model_rows, "smaller_model_row", "larger_model_row")}};
  Json groups = Json::object();
  if (spec.measured.has_groups && f.closest_s.size() == r.measured.size()) {
    for (const auto& [name, e] : errors_by_group(spec, f.closest_s, r.measured)) {
      groups[name] = error_json(e);
    }
  }
  out["per_group"] = groups;
  // --floor-only: the floor with the step's own costs as each row's framework runs them.
  const analysis::MicroBatchFloor& own = r.framework_floor;
  if (own.families > 0 && own.closest_s.size() == r.measured.size()) {
    out["framework_step_costs"] = Json{{"mean_abs_relative", own.mean_abs_relative},
                                       {"fixed_cost_families", own.fixed_cost_families},
                                       {"closest_step_time_s", own.closest_s}};
  }
  // The model's own error with the measurements' inconsistency taken out.
  if (!r.predicted.empty() && r.predicted.size() == f.closest_s.size()) {
    out["fit_against_closest"] = error_json(analysis::error_summary(r.predicted, f.closest_s));
    out["rank_correlation_against_closest"] = rank_json(spec, r.predicted, f.closest_s);
  }
  return out;
}

Json rows_json(const CalibrationSpec& spec, const CalibrationResult& r) {
  Json out = Json::array();
  const bool fitted = r.predicted.size() == r.measured.size();
  const bool held = r.held_out_predicted.size() == r.measured.size();
  for (size_t i = 0; i < r.measured.size(); ++i) {
    const MeasuredPoint& p = spec.measured.points[i];
    Json row{{"source", point_source(spec.measured, p)},
             {"file", p.path},
             {"line", p.line},
             {"group", p.group},
             {"overrides", p.overrides},
             {"measured_step_time_s", r.measured[i]}};
    if (r.initial_predicted.size() == r.measured.size()) {
      row["before_fitting_step_time_s"] = r.initial_predicted[i];
    }
    if (fitted) {
      row["fitted_step_time_s"] = r.predicted[i];
      row["fitted_error"] = r.predicted[i] / r.measured[i] - 1;
      row["fitted_on"] = fitted_on(spec, i);
    }
    if (held && r.held_out_predicted[i] > 0) {
      row["held_out_step_time_s"] = r.held_out_predicted[i];
      row["held_out_error"] = r.held_out_predicted[i] / r.measured[i] - 1;
    }
    if (i < r.floor.closest_s.size()) row["closest_step_time_s"] = r.floor.closest_s[i];
    out.push_back(row);
  }
  return out;
}

// The fit's members: parameters, errors, folds and rank correlations.
void add_fit(const CalibrationSpec& spec, const CalibrationResult& r, Json& out) {
  out["fit"] = Json{{"max_evaluations", spec.max_evaluations},
                    {"holdout_max_evaluations", spec.holdout_max_evaluations},
                    {"loss", analysis::fit_loss_name(spec.loss)},
                    {"holdout", spec.holdout},
                    {"fit_every", spec.fit_every},
                    {"evaluations", r.evaluations},
                    {"no_effect", r.fit.no_effect}};
  out["parameters"] = parameters_json(r);
  Json errors{{"before_fitting", error_json(r.initial)}, {"in_sample", error_json(r.in_sample)}};
  if (r.not_fitted.points > 0) errors["not_fitted"] = error_json(r.not_fitted);
  if (!r.held_out_predicted.empty()) {
    errors["held_out"] = error_json(r.held_out);
    errors["held_out_what"] = r.holdout;
  }
  out["errors"] = errors;
  out["held_out_folds"] = folds_json(r);
  Json ranks{{"with_the_fit", rank_json(spec, r.predicted, r.measured)}};
  if (!r.held_out_predicted.empty()) {
    ranks["held_out"] = rank_json(spec, r.held_out_predicted, r.measured);
  }
  out["rank_correlation"] = ranks;
  out["errors_by_layout_kind"] = layout_kind_json(r.layout_kinds, r.predicted, r.measured);
}

std::string indent(int depth) {
  return std::string(2 * static_cast<size_t>(depth), ' ');
}

template <typename Predicate>
bool every_element(const Json& array, Predicate is_kind) {
  return array.is_array() && std::all_of(array.begin(), array.end(), is_kind);
}

// Appends `value`, which starts `depth` levels in, laid out as json_text_one_entry_per_line says.
void append_laid_out(const Json& value, int depth, std::string& out) {
  if (value.empty() || value.is_primitive() ||
      every_element(value, [](const Json& e) { return e.is_primitive(); })) {
    out += value.dump();
    return;
  }
  const bool object = value.is_object();
  const bool one_per_line = every_element(value, [](const Json& e) { return e.is_object(); });
  out += object ? "{\n" : "[\n";
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it != value.begin()) out += ",\n";
    out += indent(depth + 1);
    if (object) out += Json(it.key()).dump() + ": ";
    if (one_per_line) {
      out += it->dump();
    } else {
      append_laid_out(*it, depth + 1, out);
    }
  }
  out += "\n" + indent(depth) + (object ? "}" : "]");
}

}  // namespace

Json calibration_json(const CalibrationSpec& spec, const CalibrationResult& r) {
  Json out{{"written_by", kCalibrationJsonWriter},
           {"base", spec.base},
           {"base_overrides", spec.base_overrides},
           {"measured", spec.measured.path},
           {"points", r.measured.size()}};
  if (!r.predicted.empty()) add_fit(spec, r, out);
  out["floor"] = floor_json(spec, r);
  out["rows"] = rows_json(spec, r);
  out["warnings"] = r.warnings;
  return out;
}

std::string json_text_one_entry_per_line(const Json& document) {
  std::string out;
  append_laid_out(document, 0, out);
  return out + "\n";
}

bool written_by_calibrate(const std::filesystem::path& path) {
  const Json doc = Json::parse(read_text_file(path), nullptr, /*allow_exceptions=*/false);
  return doc.is_object() && doc.value("written_by", std::string()) == kCalibrationJsonWriter;
}

}  // namespace racksim::app
