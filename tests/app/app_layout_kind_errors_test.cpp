// A calibration's errors split by kind of layout: each kind's mean |error| and signed mean are
// its points' own, the worst kind comes first, and a set of one kind prints nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "app/studies/layout_kind_errors.h"

namespace racksim::app {
namespace {

TEST(LayoutKindErrors, EachKindHoldsItsOwnPointsMeans) {
  const std::vector<std::string> kinds = {"a", "b", "a", "b", "a"};
  const std::vector<double> predicted = {1.1, 0.8, 0.9, 1.0, 2.0};
  const std::vector<double> measured = {1.0, 1.0, 1.0, 1.0, 0};  // the last has no measurement
  const auto errors = errors_by_layout_kind(kinds, predicted, measured);
  ASSERT_EQ(errors.size(), 2u);
  // Both at a mean |error| of 0.1 (a: +0.1 and -0.1; b: -0.2 and 0): ties keep the names' order.
  EXPECT_EQ(errors[0].kind, "a");
  EXPECT_EQ(errors[0].points, 2);
  EXPECT_NEAR(errors[0].mean_abs_relative, 0.1, 1e-12);
  EXPECT_NEAR(errors[0].mean_relative, 0.0, 1e-12);
  EXPECT_EQ(errors[1].kind, "b");
  EXPECT_EQ(errors[1].points, 2);
  EXPECT_NEAR(errors[1].mean_abs_relative, 0.1, 1e-12);
  EXPECT_NEAR(errors[1].mean_relative, -0.1, 1e-12);
}

TEST(LayoutKindErrors, TheWorstKindComesFirstAndOneKindPrintsNothing) {
  const std::vector<std::string> kinds = {"fine", "off", "off"};
  const std::vector<double> predicted = {1.01, 0.8, 0.9};
  const std::vector<double> measured = {1.0, 1.0, 1.0};
  EXPECT_EQ(layout_kind_lines(kinds, predicted, measured, "in sample"),
            "  errors by kind of layout (in sample):\n"
            "    off: 2 points, mean |error| 15.00 %, mean -15.00 %\n"
            "    fine: 1 point, mean |error| 1.00 %, mean +1.00 %\n");
  EXPECT_EQ(layout_kind_lines({"one", "one"}, {1, 2}, {1, 1}, "in sample"), "");
  const auto json = layout_kind_json(kinds, predicted, measured);
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0].at("kind"), "off");
  EXPECT_NEAR(json[0].at("mean_relative").get<double>(), -0.15, 1e-12);
}

}  // namespace
}  // namespace racksim::app
