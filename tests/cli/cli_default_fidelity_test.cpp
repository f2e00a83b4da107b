// The default fidelity (what runs when a scenario sets no sim.fidelity) against FULL, on five
// scenarios reduced to run in seconds: a dense model with TP, PP and DP; a MoE whose expert
// all-to-all crosses NVLink and the rails; data-parallel buckets overlapped with the backward
// across an oversubscribed spine (traffic of several tiers contending); the seed MoE case with
// ring attention over CP and optimizer offload; Llama-3 70B's shipped layout. The default must
// stay within its published error budget of FULL's step time on each, and report.json must say
// which fidelity ran and that budget.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run_racksim.h"
#include "tests/support/scenario_case.h"
#include "tests/support/test_scenarios.h"

namespace racksim {
namespace {

using testing::TempDir;

constexpr double kBudget = 0.005;  // report.json sim.fidelity_error_budget of the default

using Case = testing::ScenarioCase;
using testing::report_of;

std::vector<Case> cases() {
  return {
      {"DenseTp4Pp2Dp2",
       R"(
model { preset: "llama3-8b" }
hardware { preset: "dgx-h100" nodes: 2 }
layout { tp: 4 pp: 2 dp: 2 }
training { global_batch_size: 16 micro_batch_size: 1 seq_length: 4096 schedule: ONE_F_ONE_B }
)",
       {}},
      {"MoeEp16TwoNodes", testing::kMoeEp16TwoNodes, {}},
      {"OverlappedDpAcrossOversubscribedSpine", testing::kOverlappedDpAcrossSpine, {}},
      {"SeedMoeRingAttentionOffload",
       "scenarios/seed-290b-moe/512k.textproto",
       {"model.num_layers=4", "model.hybrid.sliding_window_layers=0",
        "model.hybrid.compressed_layers=2", "model.hybrid.compressed_sparse_layers=2",
        "layout.first_stage_layers=2", "training.seq_length=65536", "training.global_batch_size=4"},
       true},
      {"Llama3_70bShippedLayout",
       "scenarios/llama3-70b-h100-64.textproto",
       {"model.num_layers=8", "training.global_batch_size=8"},
       true},
  };
}

class DefaultFidelity : public ::testing::TestWithParam<Case> {};

TEST_P(DefaultFidelity, StaysWithinItsBudgetOfFull) {
  const Case& c = GetParam();
  TempDir dir;
  const auto full = report_of(dir, c, {"sim.fidelity=FULL"});
  const auto fast = report_of(dir, c, {});
  ASSERT_TRUE(full.contains("sim") && fast.contains("sim"));
  EXPECT_EQ(full["sim"]["fidelity"], "FULL");
  EXPECT_EQ(full["sim"]["fidelity_error_budget"].get<double>(), 0.0);
  EXPECT_NE(fast["sim"]["fidelity"], "FULL") << "the default is a faster fidelity";
  EXPECT_EQ(fast["sim"]["fidelity_error_budget"].get<double>(), kBudget);
  const double reference = full["step_time_s"].get<double>();
  const double step = fast["step_time_s"].get<double>();
  EXPECT_LE(std::abs(step - reference), kBudget * reference)
      << c.name << ": default " << step << " s against FULL " << reference << " s";
  EXPECT_LT(fast["sim"]["events"].get<double>(), full["sim"]["events"].get<double>());
}

INSTANTIATE_TEST_SUITE_P(Scenarios, DefaultFidelity, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace racksim
