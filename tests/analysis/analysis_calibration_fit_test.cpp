// The robust fit on an analytic model (no simulation): it recovers known parameters from
// synthetic measurements, resists an outlier, and the helpers (rank correlation, folds) do what
// the calibration report says.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analysis/calibration_fit.h"

namespace racksim {
namespace {

// A roofline-like step time: GEMM work at efficiency e_g plus attention work at e_a.
std::vector<double> model_times(double e_g, double e_a, const std::vector<size_t>& which) {
  std::vector<double> out;
  for (size_t i : which) {
    const double gemm = 1.0 + 0.5 * static_cast<double>(i);
    const double attention = 0.2 + 0.3 * static_cast<double>(i % 3);
    out.push_back(gemm / e_g + attention / e_a + 0.01);
  }
  return out;
}

// The predictor of model_times for the two parameters' values.
std::vector<double> two_param_times(const std::vector<double>& v,
                                    const std::vector<size_t>& which) {
  return model_times(v[0], v[1], which);
}

std::vector<analysis::FitParameter> two_params() {
  return {{"hardware.compute.gemm", 0.75, 0.01, 1.0},
          {"hardware.compute.attention", 0.60, 0.01, 1.0}};
}

TEST(CalibrationFit, RecoversKnownParameters) {
  std::vector<size_t> all{0, 1, 2, 3, 4, 5};
  const std::vector<double> measured = model_times(0.55, 0.35, all);
  const analysis::Predictor predict = two_param_times;
  analysis::FitOptions options;
  options.max_evaluations = 200;
  const auto fit = analysis::fit_parameters(two_params(), measured, all, predict, options);
  EXPECT_NEAR(fit.values[0], 0.55, 0.005);
  EXPECT_NEAR(fit.values[1], 0.35, 0.005);
  EXPECT_LT(analysis::error_summary(fit.predicted, measured).max_abs_relative, 1e-3);
  EXPECT_LE(fit.evaluations, 200);
}

// A parameter the predictions ignore (a term of another compute model) is flagged, not
// reported as fitted; one that acts is not flagged, even where the fit stops at its start.
TEST(CalibrationFit, AParameterThatActsOnNothingIsFlagged) {
  std::vector<size_t> all{0, 1, 2, 3, 4, 5};
  const std::vector<double> measured = model_times(0.55, 0.35, all);
  const analysis::Predictor inert = [](const std::vector<double>&,
                                       const std::vector<size_t>& which) {
    return model_times(0.6, 0.4, which);
  };
  const analysis::Predictor acting = two_param_times;
  analysis::FitOptions options;
  options.max_evaluations = 20;
  const auto flat = analysis::fit_parameters(two_params(), measured, all, inert, options);
  EXPECT_TRUE(flat.no_effect);
  EXPECT_GE(flat.evaluations, 2);
  const auto fitted = analysis::fit_parameters(two_params(), measured, all, acting, options);
  EXPECT_FALSE(fitted.no_effect);
}

TEST(CalibrationFit, ASingleOutlierDoesNotDragTheFit) {
  std::vector<size_t> all{0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<double> measured = model_times(0.55, 0.35, all);
  measured[3] *= 2;  // a broken run
  const analysis::Predictor predict = two_param_times;
  analysis::FitOptions options;
  options.max_evaluations = 300;
  const auto fit = analysis::fit_parameters(two_params(), measured, all, predict, options);
  // The other seven points stay well predicted: the outlier's pull is bounded (soft-L1).
  double worst = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i != 3) worst = std::max(worst, std::abs(fit.predicted[i] / measured[i] - 1));
  }
  EXPECT_LT(worst, 0.05);
  EXPECT_NEAR(fit.values[0], 0.55, 0.1);
}

// One evaluation evaluates the start, even within the optimizer's first step of a bound: the
// calibration report's "apply these values" runs (--max-evals 1) predict with the values given.
TEST(CalibrationFit, ASingleEvaluationIsTheStartNearABound) {
  std::vector<size_t> all{0, 1, 2, 3};
  const std::vector<double> measured = model_times(0.55, 0.35, all);
  std::vector<std::vector<double>> seen;
  const analysis::Predictor predict = [&](const std::vector<double>& v,
                                          const std::vector<size_t>& which) {
    seen.push_back(v);
    return model_times(v[0], v[1], which);
  };
  analysis::FitOptions options;
  options.max_evaluations = 1;
  const auto fit =
      analysis::fit_parameters(two_params(), measured, all, predict, options, {0.87, 0.35});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NEAR(fit.values[0], 0.87, 1e-12);
  EXPECT_NEAR(fit.values[1], 0.35, 1e-12);
}

// One scale factor x on predictions of 1 against measurements 1, 1, 1 and 2: the mean |error|
// is lowest at x = 1 (a weighted median of the ratios), while the soft-L1 of the log errors
// gives the fourth point a bounded pull, about 2c / 6 in the log of x for three points at
// curvature 2 each (x near 1.034 at c = 0.1).
TEST(CalibrationFit, TheAbsoluteLossFitsTheMeanErrorItself) {
  const std::vector<double> measured{1, 1, 1, 2};
  const std::vector<size_t> all{0, 1, 2, 3};
  const analysis::Predictor scaled = [](const std::vector<double>& v,
                                        const std::vector<size_t>& which) {
    return std::vector<double>(which.size(), v[0]);
  };
  const std::vector<analysis::FitParameter> x{{"hardware.scale_out.step_overhead_s", 1.2, 0.1, 10}};
  analysis::FitOptions options;
  options.max_evaluations = 200;
  const auto robust = analysis::fit_parameters(x, measured, all, scaled, options);
  options.loss = analysis::FitLoss::kAbsoluteRelative;
  const auto absolute = analysis::fit_parameters(x, measured, all, scaled, options);
  EXPECT_NEAR(absolute.values[0], 1.0, 0.005);
  EXPECT_NEAR(robust.values[0], 1.034, 0.01);
  EXPECT_LT(analysis::error_summary(absolute.predicted, measured).mean_abs_relative,
            analysis::error_summary(robust.predicted, measured).mean_abs_relative);
  EXPECT_STREQ(analysis::fit_loss_name(options.loss), "abs");
}

TEST(CalibrationFit, OverParameterisedWhenParametersMatchPoints) {
  EXPECT_TRUE(analysis::over_parameterised(2, 2));
  EXPECT_TRUE(analysis::over_parameterised(3, 2));
  EXPECT_FALSE(analysis::over_parameterised(2, 3));
}

TEST(CalibrationFit, RankCorrelationAndFolds) {
  EXPECT_DOUBLE_EQ(analysis::rank_correlation({1, 2, 3, 4}, {10, 20, 30, 40}), 1);
  EXPECT_DOUBLE_EQ(analysis::rank_correlation({1, 2, 3, 4}, {40, 30, 20, 10}), -1);
  const auto loo = analysis::holdout_folds(4, {}, 0);
  EXPECT_EQ(loo.size(), 4u);
  const auto groups = analysis::holdout_folds(4, {"a", "b", "a", "b"}, 0);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0], (std::vector<size_t>{0, 2}));
  EXPECT_EQ(analysis::holdout_folds(10, {}, 5).size(), 5u);
}

}  // namespace
}  // namespace racksim
