#include "analysis/calibration_fit.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>
#include <nlopt.h>

namespace racksim::analysis {

namespace {

struct Objective {
  const std::vector<FitParameter>* params = nullptr;
  const std::vector<double>* measured = nullptr;
  const std::vector<size_t>* which = nullptr;
  const Predictor* predict = nullptr;
  const FitOptions* options = nullptr;
  nlopt_opt opt = nullptr;
  std::exception_ptr error;  // a C++ exception must not cross NLopt's C frames
  int evaluations = 0;
  double best_loss = std::numeric_limits<double>::infinity();
  std::vector<double> best_values;
  std::vector<double> best_predicted;
  // The first evaluation's predictions, and whether every later one gave exactly the same.
  std::vector<double> first_predicted;
  bool unchanged = true;
};

double evaluate(unsigned n, const double* log_values, double* /*gradient*/, void* data) {
  auto& o = *static_cast<Objective*>(data);
  std::vector<double> values(n);
  for (unsigned i = 0; i < n; ++i) values[i] = std::exp(log_values[i]);
  std::vector<double> predicted;
  try {
    predicted = (*o.predict)(values, *o.which);
  } catch (...) {
    o.error = std::current_exception();
    nlopt_force_stop(o.opt);
    return HUGE_VAL;
  }
  double loss = 0;
  for (size_t k = 0; k < o.which->size(); ++k) {
    const double measured = (*o.measured)[(*o.which)[k]];
    loss += o.options->loss == FitLoss::kAbsoluteRelative
                ? std::abs(predicted[k] / measured - 1)
                : soft_l1(std::log(predicted[k] / measured), o.options->loss_scale);
  }
  if (o.evaluations == 0) {
    o.first_predicted = predicted;
  } else if (predicted != o.first_predicted) {
    o.unchanged = false;
  }
  ++o.evaluations;
  if (loss < o.best_loss) {
    o.best_loss = loss;
    o.best_values = values;
    o.best_predicted = predicted;
  }
  return loss;
}

std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = (i + j) / 2.0;
    i = j + 1;
  }
  return ranks;
}

}  // namespace

const char* fit_loss_name(FitLoss loss) {
  return loss == FitLoss::kAbsoluteRelative ? "abs" : "soft-l1";
}

double soft_l1(double log_error, double scale) {
  const double z = log_error / scale;
  return 2 * scale * scale * (std::sqrt(1 + z * z) - 1);
}

FitResult fit_parameters(const std::vector<FitParameter>& params,
                         const std::vector<double>& measured, const std::vector<size_t>& which,
                         const Predictor& predict, const FitOptions& options,
                         const std::vector<double>& start) {
  const unsigned n = static_cast<unsigned>(params.size());
  Objective objective;
  objective.params = &params;
  objective.measured = &measured;
  objective.which = &which;
  objective.predict = &predict;
  objective.options = &options;
  std::vector<double> x(n), lower(n), upper(n), step(n);
  for (unsigned i = 0; i < n; ++i) {
    lower[i] = std::log(params[i].lower);
    upper[i] = std::log(params[i].upper);
    const double initial = start.size() == n ? start[i] : params[i].initial;
    x[i] = std::clamp(std::log(initial), lower[i], upper[i]);
    step[i] = std::min(0.2, (upper[i] - lower[i]) / 4);  // about 20 % at first
    // BOBYQA moves a start closer than its first step to a bound before evaluating anything, so
    // a start near a bound (a GEMM fraction of 0.87 under 1) would never be evaluated: the first
    // step stays inside the room the start has, unless that room is under 2 %.
    const double room = std::min(x[i] - lower[i], upper[i] - x[i]);
    if (room >= 0.02) step[i] = std::min(step[i], room);
  }
  // BOBYQA needs at least two parameters; one is searched with Nelder-Mead (a bracketing walk).
  nlopt_opt opt = nlopt_create(n >= 2 ? NLOPT_LN_BOBYQA : NLOPT_LN_NELDERMEAD, n);
  if (opt == nullptr) throw std::runtime_error("calibration: cannot create the optimizer");
  objective.opt = opt;
  nlopt_set_lower_bounds(opt, lower.data());
  nlopt_set_upper_bounds(opt, upper.data());
  nlopt_set_initial_step(opt, step.data());
  nlopt_set_min_objective(opt, evaluate, &objective);
  nlopt_set_xtol_abs1(opt, 1e-3);  // 0.1 % on every parameter
  nlopt_set_ftol_abs(opt, 1e-9);
  nlopt_set_maxeval(opt, std::max(options.max_evaluations, 1));
  double loss = 0;
  const nlopt_result status = nlopt_optimize(opt, x.data(), &loss);
  nlopt_destroy(opt);
  if (objective.error) std::rethrow_exception(objective.error);
  if (objective.best_values.empty()) {
    throw std::runtime_error(
        fmt::format("calibration: the optimizer stopped before evaluating "
                    "anything (NLopt status {})",
                    static_cast<int>(status)));
  }
  FitResult result;
  result.values = objective.best_values;
  result.predicted = objective.best_predicted;
  result.loss = objective.best_loss;
  result.evaluations = objective.evaluations;
  result.no_effect = objective.unchanged && objective.evaluations >= 2;
  return result;
}

ErrorSummary error_summary(const std::vector<double>& predicted,
                           const std::vector<double>& measured) {
  ErrorSummary e;
  e.points = predicted.size();
  if (e.points == 0) return e;
  double log_sq = 0;
  for (size_t i = 0; i < predicted.size(); ++i) {
    const double signed_rel = predicted[i] / measured[i] - 1;
    const double rel = std::abs(signed_rel);
    e.mean_relative += signed_rel;
    e.mean_abs_relative += rel;
    e.max_abs_relative = std::max(e.max_abs_relative, rel);
    const double l = std::log(predicted[i] / measured[i]);
    log_sq += l * l;
  }
  e.mean_abs_relative /= static_cast<double>(e.points);
  e.mean_relative /= static_cast<double>(e.points);
  e.rms_log = std::sqrt(log_sq / static_cast<double>(e.points));
  return e;
}

GroupedValues group_by_key(const std::vector<std::string>& keys, const std::vector<double>& values,
                           const std::vector<double>& reference) {
  GroupedValues groups;
  const size_t n = std::min({keys.size(), values.size(), reference.size()});
  for (size_t i = 0; i < n; ++i) {
    if (!(values[i] > 0) || !(reference[i] > 0)) continue;
    auto& g = groups[keys[i]];
    g.first.push_back(values[i]);
    g.second.push_back(reference[i]);
  }
  return groups;
}

double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n = a.size();
  if (n < 2 || b.size() != n) return 0;
  const auto ra = average_ranks(a);
  const auto rb = average_ranks(b);
  const double mean = (n - 1) / 2.0;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < n; ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0;
}

std::vector<std::vector<size_t>> holdout_folds(size_t points,
                                               const std::vector<std::string>& groups, int k) {
  std::vector<std::vector<size_t>> folds;
  if (!groups.empty()) {
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < points; ++i) {
      auto [it, inserted] = index.try_emplace(groups[i], folds.size());
      if (inserted) folds.emplace_back();
      folds[it->second].push_back(i);
    }
    return folds;
  }
  const size_t count = k > 0 && static_cast<size_t>(k) < points ? static_cast<size_t>(k) : points;
  folds.resize(count);
  for (size_t i = 0; i < points; ++i) folds[i * count / points].push_back(i);
  return folds;
}

}  // namespace racksim::analysis
