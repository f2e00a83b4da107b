// Symmetry folding: one simulated data-parallel replica must give the unfolded step time
// within 1%, and scenarios whose replicas differ are refused with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <google/protobuf/text_format.h>
#include <nlohmann/json.hpp>

#include "config/symmetry_fold.h"
#include "tests/support/run_racksim.h"
#include "tests/support/test_scenarios.h"

namespace racksim {
namespace {

using testing::ReportRun;
using testing::run_scenario_report;
using testing::TempDir;

// Llama-3 8B on 4 x DGX H100, TP4 PP2 DP4: gradient all-reduce across servers.
constexpr const char* kDense = R"(
model { preset: "llama3-8b" }
hardware { preset: "dgx-h100" nodes: 4 }
layout { tp: 4 pp: 2 dp: 4 }
training { global_batch_size: 32 micro_batch_size: 1 seq_length: 4096 schedule: ONE_F_ONE_B }
)";

constexpr const char* kMoe = testing::kMoeEp16TwoNodes;

class FoldError : public ::testing::TestWithParam<const char*> {};

TEST_P(FoldError, FoldedStepWithinOnePercentOfUnfolded) {
  TempDir dir;
  const std::string scenario = GetParam();
  const ReportRun whole = run_scenario_report(dir, scenario, {"sim.fidelity=FULL"});
  const ReportRun folded =
      run_scenario_report(dir, scenario, {"sim.fidelity=FULL", "sim.fold_replicas=true"});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  const double a = whole.report["step_time_s"].get<double>();
  const double b = folded.report["step_time_s"].get<double>();
  EXPECT_LT(std::abs(b - a) / a, 0.01) << "folded " << b << " s, unfolded " << a << " s";
  EXPECT_GT(folded.report["sim"]["folded_replicas"].get<int>(), 1);
  EXPECT_EQ(whole.report["sim"]["folded_replicas"].get<int>(), 1);
  EXPECT_LT(folded.report["sim"]["ops"].get<double>(), whole.report["sim"]["ops"].get<double>());
}

INSTANTIATE_TEST_SUITE_P(Cases, FoldError, ::testing::Values(kDense, kMoe),
                         [](const auto& info) { return info.index == 0 ? "Dense" : "Moe"; });

struct Refusal {
  const char* name;
  const char* scenario;
  std::vector<std::string> sets;
  const char* reason;
};

class FoldRefusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(FoldRefusal, ExitsTwoSayingWhy) {
  const Refusal& c = GetParam();
  TempDir dir;
  std::vector<std::string> sets = c.sets;
  sets.push_back("sim.fold_replicas=true");
  const ReportRun r = run_scenario_report(dir, c.scenario, sets);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("sim.fold_replicas"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(c.reason), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FoldRefusal,
    ::testing::Values(Refusal{"SkewedRouting",
                              kMoe,
                              {"training.routing=ZIPF", "training.routing_zipf_exponent=1"},
                              "cannot fold: skewed routing: training.routing is ZIPF"},
                      Refusal{"OneReplica",
                              kDense,
                              {"layout.dp=1", "hardware.nodes=1"},
                              "cannot fold: layout.dp is 1"}),
    [](const auto& info) { return std::string(info.param.name); });

config::Scenario parse(const std::string& text) {
  config::Scenario s;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &s));
  return s;
}

TEST(FoldRefusalReason, MixedNicsNameThePort) {
  const auto s = parse(R"(
    hardware { gpus_per_node: 8 scale_out { nic_bits_per_s: 400e9
               ports { index: 3 link_layer: ETHERNET } } }
    layout { tp: 8 pp: 1 dp: 4 })");
  const auto why = config::fold_refusal(s);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("mixed NICs: hardware.scale_out.ports gives port 3 ETHERNET"),
            std::string::npos)
      << *why;
}

TEST(FoldRefusalReason, LayoutStraddlingDomainsUnevenly) {
  const auto s = parse(R"(
    hardware { gpus_per_node: 8 scale_up { domain_size: 8 } }
    layout { tp: 3 cp: 2 pp: 1 dp: 4 })");
  const auto why = config::fold_refusal(s);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("uneven placement: a replica's tp x cp = 6 GPUs"), std::string::npos) << *why;
}

TEST(FoldRefusalReason, SymmetricScenarioFoldsToReplicaZero) {
  const auto s = parse(R"(
    hardware { gpus_per_node: 8 scale_out { nic_bits_per_s: 400e9 ports { index: 2 } } }
    layout { tp: 4 cp: 1 pp: 2 dp: 4 })");
  EXPECT_FALSE(config::fold_refusal(s).has_value());
  const auto ranks = config::folded_ranks(ParallelLayout::from_config(s.layout()));
  ASSERT_EQ(ranks.size(), 32u);
  // Ranks are tp-fastest, then dp, then pp: replica 0 is ranks 0-3 and 16-19.
  for (uint32_t r = 0; r < ranks.size(); ++r) EXPECT_EQ(ranks[r], r % 16 < 4) << r;
}

}  // namespace
}  // namespace racksim
