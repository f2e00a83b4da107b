// The shortcuts' error against FULL fidelity (every collective decomposed into its flows), on
// cases small enough to run both in seconds: a dense model with TP, PP and DP over two servers,
// and a MoE whose expert all-to-all crosses servers. The bounds are the measured errors with
// some headroom; README "Fidelity levels" has the table on larger cases.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/run_racksim.h"
#include "tests/support/test_scenarios.h"

namespace racksim {
namespace {

using testing::TempDir;

// Llama-3 8B on 2 x DGX H100, TP4 PP2 DP2, 8 micro-batches per replica.
constexpr const char* kDense = R"(
model { preset: "llama3-8b" }
hardware { preset: "dgx-h100" nodes: 2 }
layout { tp: 4 pp: 2 dp: 2 }
training { global_batch_size: 16 micro_batch_size: 1 seq_length: 4096 schedule: ONE_F_ONE_B }
)";

constexpr const char* kMoe = testing::kMoeEp16TwoNodes;

nlohmann::json run(const TempDir& dir, const std::string& scenario,
                   const std::vector<std::string>& sets) {
  const auto r = testing::run_scenario_report(dir, scenario, sets);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.report;
}

double step_s(const TempDir& dir, const std::string& scenario, const std::string& fidelity,
              std::vector<std::string> sets = {}) {
  sets.push_back("sim.fidelity=" + fidelity);
  const auto report = run(dir, scenario, sets);
  EXPECT_EQ(report["sim"]["fidelity"], fidelity);
  return report["step_time_s"].get<double>();
}

double relative_error(double value, double reference) {
  return std::abs(value - reference) / reference;
}

struct Bound {
  const char* fidelity;
  double dense;  // max relative error of the step time vs FULL
  double moe;
};

class ShortcutError : public ::testing::TestWithParam<Bound> {};

TEST_P(ShortcutError, StepTimeStaysWithinItsBoundOfFull) {
  const Bound b = GetParam();
  TempDir dir;
  const double dense_full = step_s(dir, kDense, "FULL");
  const double moe_full = step_s(dir, kMoe, "FULL");
  const double dense = step_s(dir, kDense, b.fidelity);
  const double moe = step_s(dir, kMoe, b.fidelity);
  EXPECT_LE(relative_error(dense, dense_full), b.dense)
      << b.fidelity << " dense " << dense << " s vs FULL " << dense_full << " s";
  EXPECT_LE(relative_error(moe, moe_full), b.moe)
      << b.fidelity << " MoE " << moe << " s vs FULL " << moe_full << " s";
}

INSTANTIATE_TEST_SUITE_P(Fidelity, ShortcutError,
                         ::testing::Values(Bound{"AGGREGATED", 0.001, 0.001},
                                           Bound{"ANALYTIC", 0.001, 0.002},
                                           Bound{"AUTO", 0.001, 0.002}),
                         [](const auto& info) { return std::string(info.param.fidelity); });

TEST(ShortcutCounts, AnalyticTimesEveryCollectiveAndAutoMixes) {
  TempDir dir;
  const auto analytic = run(dir, kMoe, {"sim.fidelity=ANALYTIC"});
  EXPECT_EQ(analytic["sim"]["flow_collectives"], 0);
  EXPECT_GT(analytic["sim"]["analytic_collectives"].get<int>(), 0);
  const auto full = run(dir, kMoe, {"sim.fidelity=FULL"});
  EXPECT_EQ(full["sim"]["analytic_collectives"], 0);
  EXPECT_LT(analytic["sim"]["events"].get<double>(), full["sim"]["events"].get<double>());
}

}  // namespace
}  // namespace racksim
