// Fitting simulator parameters to measured step times, and saying how far to trust the fit.
//
// The loss is robust least squares on the log error: r_i = ln(predicted_i / measured_i), loss =
// sum of soft-L1(r_i) = 2 c^2 (sqrt(1 + (r_i / c)^2) - 1), quadratic for errors well under c
// (10 % by default) and linear above, so one odd measurement does not drag the fit. Or, to fit
// to the figure a target is stated in, the mean |predicted_i / measured_i - 1| itself. Parameters
// are searched in log space within bounds by NLopt's BOBYQA (derivative-free: every evaluation
// is a set of simulations), a bounded number of times.
//
// The seed case's lesson: a fit with as many parameters as points always fits. So the fit
// reports held-out errors (each point or group predicted by a fit that did not see it) and
// flags an over-parameterised fit.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace racksim::analysis {

struct FitParameter {
  std::string field;  // "hardware.compute.gemm"
  double initial = 0;
  double lower = 0;  // > 0
  double upper = 0;
};

enum class FitLoss {
  kSoftL1Log,         // soft-L1 of ln(predicted / measured): robust, the default
  kAbsoluteRelative,  // |predicted / measured - 1|: the mean |error| a MAPE target states
};

struct FitOptions {
  int max_evaluations = 60;
  FitLoss loss = FitLoss::kSoftL1Log;
  double loss_scale = 0.1;  // c of the soft-L1 loss, on the log error
};

// "soft-l1" or "abs", as racksim calibrate's --loss names them.
const char* fit_loss_name(FitLoss loss);

// Predicted step times of the points `which` (indices into the measured list) for parameter
// values `values` (one per FitParameter). Throws on failure.
using Predictor = std::function<std::vector<double>(const std::vector<double>& values,
                                                    const std::vector<size_t>& which)>;

struct FitResult {
  std::vector<double> values;
  std::vector<double> predicted;  // for the fitted points, in their order
  double loss = 0;
  int evaluations = 0;
  // Every evaluation predicted exactly the same times: the parameters do not act on these points
  // (a term the scenario's compute model does not use, say), so the "fit" is their start.
  bool no_effect = false;
};

double soft_l1(double log_error, double scale);

// Fits the parameters to measured[which]; `start` gives the starting values (defaults: each
// parameter's initial).
FitResult fit_parameters(const std::vector<FitParameter>& params,
                         const std::vector<double>& measured, const std::vector<size_t>& which,
                         const Predictor& predict, const FitOptions& options,
                         const std::vector<double>& start = {});

struct ErrorSummary {
  double mean_abs_relative = 0;  // mean |predicted / measured - 1|
  double max_abs_relative = 0;
  double rms_log = 0;  // root mean square of ln(predicted / measured)
  size_t points = 0;
  double mean_relative = 0;  // mean of predicted / measured - 1, signed
};

ErrorSummary error_summary(const std::vector<double>& predicted,
                           const std::vector<double>& measured);

// Per key (one per point), the points' values and their reference values, leaving out a point
// whose value or reference is not positive (not simulated, or held out by no fold).
using GroupedValues = std::map<std::string, std::pair<std::vector<double>, std::vector<double>>>;
GroupedValues group_by_key(const std::vector<std::string>& keys, const std::vector<double>& values,
                           const std::vector<double>& reference);

// Spearman's rank correlation (average ranks for ties); 0 for fewer than two points.
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b);

// The folds of a held-out check: by group when groups are given (leave one group out), else
// leave one out, or k contiguous folds when k > 0 and smaller than the number of points.
std::vector<std::vector<size_t>> holdout_folds(size_t points,
                                               const std::vector<std::string>& groups, int k);

// Whether a fit of `params` parameters to `points` points can match them exactly.
inline bool over_parameterised(size_t params, size_t points) {
  return params >= points;
}

}  // namespace racksim::analysis
