// training.moe_a2a_overlap (Megatron-Core's combined 1F1B) on whole steps: the expert
// all-to-alls of one micro-batch travel while another computes, so the step is shorter by at
// most the all-to-all time the plain schedule exposes and never shorter than its compute; the
// extra warm-up micro-batch costs activation memory; scenarios it cannot run are refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::TempDir;

// Qwen3-30B-A3B cut to 8 layers on 4 DGX H100: EP16 spans two servers, so the all-to-alls
// cross InfiniBand; 8 micro-batches per DP rank over pp 2 x 2 virtual stages.
const char* kScenario =
    R"pb(model { preset: "qwen3-30b-a3b" num_layers: 8 }
         hardware { preset: "dgx-h100" nodes: 4 }
         layout { tp: 1 pp: 2 dp: 16 ep: 16 virtual_stages: 2 }
         training { global_batch_size: 128 seq_length: 4096 schedule: INTERLEAVED_1F1B }
    )pb";

nlohmann::json report(const TempDir& dir, std::vector<std::string> sets, bool overlap) {
  sets.push_back(std::string("training.moe_a2a_overlap=") + (overlap ? "true" : "false"));
  const auto run = testing::run_scenario_report(dir, kScenario, sets);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run.report;
}

void expect_hides_only_the_all_to_alls(const nlohmann::json& plain,
                                       const nlohmann::json& overlapped) {
  const double plain_s = plain.value("step_time_s", 0.0);
  const double overlapped_s = overlapped.value("step_time_s", 0.0);
  const double exposed_ep_s = plain["breakdown_s"]["exposed_comm"]["ep"].get<double>();
  const double compute_s = plain["breakdown_s"]["compute"].get<double>();
  ASSERT_GT(exposed_ep_s, 0.2 * plain_s) << "the case must expose its all-to-alls";
  EXPECT_LT(overlapped_s, plain_s - 0.25 * exposed_ep_s);
  EXPECT_GE(overlapped_s, plain_s - exposed_ep_s);
  EXPECT_GE(overlapped_s, compute_s);
  // The same kernels run, two passes sharing the GPU.
  EXPECT_NEAR(overlapped["breakdown_s"]["compute"].get<double>(), compute_s, 1e-6 * compute_s);
}

TEST(MoeA2aOverlap, InterleavedStagesHidePartOfTheAllToAllsAndNoMore) {
  TempDir dir;
  const nlohmann::json plain = report(dir, {}, false);
  const nlohmann::json overlapped = report(dir, {}, true);
  expect_hides_only_the_all_to_alls(plain, overlapped);
  // The report says which schedule ran.
  EXPECT_NE(overlapped.value("description", "").find("combined 1F1B"), std::string::npos);
  EXPECT_EQ(plain.value("description", "").find("combined 1F1B"), std::string::npos);
  // One more micro-batch's activations in flight on every stage.
  EXPECT_GT(overlapped["memory"]["activations_bytes"].get<double>(),
            plain["memory"]["activations_bytes"].get<double>());
}

TEST(MoeA2aOverlap, WithoutPipelineStagesEachForwardRunsBesideThePreviousBackward) {
  TempDir dir;
  const std::vector<std::string> one_stage = {"layout.pp=1", "layout.virtual_stages=1",
                                              "layout.dp=32", "training.schedule=ONE_F_ONE_B"};
  expect_hides_only_the_all_to_alls(report(dir, one_stage, false), report(dir, one_stage, true));
}

// Megatron-Core refuses the overlap without experts across ranks, and with pipeline stages
// outside the interleaved schedule.
TEST(MoeA2aOverlap, ScenariosItCannotRunAreRefusedNamingTheField) {
  TempDir dir;
  const std::vector<std::vector<std::string>> refused = {
      {"model.preset=llama3-8b", "layout.ep=1"},
      {"layout.virtual_stages=1", "training.schedule=ONE_F_ONE_B"},
      {"training.recompute=FULL"},
  };
  for (std::vector<std::string> sets : refused) {
    sets.push_back("training.moe_a2a_overlap=true");
    const auto run = testing::run_scenario_report(dir, kScenario, sets);
    EXPECT_EQ(run.exit_code, 2) << sets.front();
    EXPECT_NE(run.err.find("training.moe_a2a_overlap"), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace racksim
