// The pipeline's steady state (sim.steady_state, on by default below FULL fidelity): a step of many
// micro-batches extended from two short simulated steps must give what replaying every
// micro-batch gives, on the schedules it accepts (1F1B, interleaved 1F1B), on a MoE whose
// all-to-all crosses the rails, with traffic of several tiers contending, and on the seed case's
// ring attention with optimizer offload; and it must stay within the default's error budget of
// FULL. GPipe, ZB-H1, DualPipe and short steps are replayed whole, and report.json says why.
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

// A periodic schedule is extended exactly, up to the summation order of the floating-point
// figures; the check tolerates 1e-4 of one period.
constexpr double kExact = 1e-6;

using Case = testing::ScenarioCase;
using testing::report_of;

constexpr const char* kDense = R"(
model { preset: "llama3-8b" num_layers: 8 }
hardware { preset: "dgx-h100" nodes: 2 }
layout { tp: 4 pp: 2 dp: 2 }
training { global_batch_size: 64 micro_batch_size: 1 seq_length: 4096 schedule: ONE_F_ONE_B }
)";

constexpr const char* kDeepPipeline = R"(
model { preset: "llama3-8b" num_layers: 16 }
hardware { preset: "dgx-h100" nodes: 2 }
layout { tp: 4 pp: 4 dp: 1 }
training { global_batch_size: 64 micro_batch_size: 1 seq_length: 4096 schedule: ONE_F_ONE_B }
)";

std::vector<Case> cases() {
  return {
      {"Dense1F1B", kDense, {}},
      {"MoeEp16AcrossTheRails", testing::kMoeEp16TwoNodes, {"training.global_batch_size=512"}},
      {"OverlappedDpAcrossOversubscribedSpine",
       testing::kOverlappedDpAcrossSpine,
       {"training.global_batch_size=128"}},
      // The first stage holds 7 layers, the others 3: the later stages settle to its pace only
      // after a few micro-batches.
      {"UnequalStages", kDeepPipeline, {"layout.first_stage_layers=7"}},
      {"Interleaved1F1B",
       kDeepPipeline,
       {"training.schedule=INTERLEAVED_1F1B", "layout.virtual_stages=2",
        "training.global_batch_size=128"}},
      {"SeedMoeRingAttentionOffload",
       "scenarios/seed-290b-moe/512k.textproto",
       {"model.num_layers=4", "model.hybrid.sliding_window_layers=0",
        "model.hybrid.compressed_layers=2", "model.hybrid.compressed_sparse_layers=2",
        "layout.first_stage_layers=2", "training.seq_length=65536",
        "training.global_batch_size=32"},
       true},
  };
}

// Every figure of the breakdown, the critical path by kind and the energy, against the whole
// replay's.
void expect_same_figures(const nlohmann::json& extended, const nlohmann::json& whole,
                         const std::string& name) {
  const double step = whole["step_time_s"].get<double>();
  const auto near = [&](const nlohmann::json& a, const nlohmann::json& b, const std::string& what) {
    EXPECT_NEAR(a.get<double>(), b.get<double>(), kExact * step) << name << ": " << what;
  };
  near(extended["step_time_s"], whole["step_time_s"], "step_time_s");
  for (const char* key : {"compute", "recompute", "bubble", "optimizer", "offload", "other"}) {
    near(extended["breakdown_s"][key], whole["breakdown_s"][key], key);
  }
  for (const auto& [dim, seconds] : whole["breakdown_s"]["exposed_comm"].items()) {
    near(extended["breakdown_s"]["exposed_comm"][dim], seconds, "exposed_comm " + dim);
  }
  // The rank itself may differ where replicas end within rounding of each other.
  EXPECT_EQ(extended["breakdown_s"]["pp_stage"], whole["breakdown_s"]["pp_stage"]) << name;
  EXPECT_NEAR(extended["mfu"]["model"].get<double>(), whole["mfu"]["model"].get<double>(), kExact)
      << name;
  const double joules = whole["energy"]["j_per_step"].get<double>();
  EXPECT_NEAR(extended["energy"]["j_per_step"].get<double>(), joules, kExact * joules) << name;
}

class SteadyState : public ::testing::TestWithParam<Case> {};

TEST_P(SteadyState, ExtendsToWhatEveryMicroBatchGives) {
  const Case& c = GetParam();
  TempDir dir;
  const auto extended = report_of(dir, c, {});
  const auto whole = report_of(dir, c, {"sim.steady_state=false"});
  ASSERT_TRUE(extended.contains("sim") && whole.contains("sim"));
  const auto& used = extended["sim"]["steady_state"];
  ASSERT_TRUE(used["extended"].get<bool>()) << c.name << ": " << used.dump();
  EXPECT_FALSE(whole["sim"]["steady_state"]["extended"].get<bool>());
  EXPECT_LE(used["spacing_error"].get<double>(), 1e-4) << c.name;
  EXPECT_LT(extended["sim"]["ops"].get<double>(), whole["sim"]["ops"].get<double>()) << c.name;
  expect_same_figures(extended, whole, c.name);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, SteadyState, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// The default (steady state at AUTO) against the reference (every micro-batch at FULL): within
// the default's published error budget.
TEST(SteadyStateDefault, StaysWithinTheBudgetOfFull) {
  TempDir dir;
  for (const Case& c : {cases()[0], cases()[2]}) {
    const auto fast = report_of(dir, c, {});
    const auto full = report_of(dir, c, {"sim.fidelity=FULL"});
    ASSERT_TRUE(fast["sim"]["steady_state"]["extended"].get<bool>()) << c.name;
    EXPECT_FALSE(full["sim"]["steady_state"]["extended"].get<bool>()) << "FULL replays all";
    const double reference = full["step_time_s"].get<double>();
    EXPECT_LE(std::abs(fast["step_time_s"].get<double>() - reference), 0.005 * reference) << c.name;
  }
}

TEST(SteadyStateDefault, OtherSchedulesAndShortStepsAreReplayedWhole) {
  TempDir dir;
  const Case deep{"deep", kDeepPipeline, {}};
  for (const auto& [schedule, reason] : std::vector<std::pair<std::string, std::string>>{
           {"GPIPE", "GPipe"}, {"ZB_H1", "ZB-H1"}, {"DUALPIPE", "DualPipe"}}) {
    const auto r = report_of(dir, deep, {"training.schedule=" + schedule});
    EXPECT_FALSE(r["sim"]["steady_state"]["extended"].get<bool>()) << schedule;
    EXPECT_NE(r["sim"]["steady_state"]["not_extended"].get<std::string>().find(reason),
              std::string::npos)
        << schedule;
  }
  const auto short_step = report_of(dir, cases()[0], {"training.global_batch_size=16"});
  EXPECT_FALSE(short_step["sim"]["steady_state"]["extended"].get<bool>());
}

}  // namespace
}  // namespace racksim
