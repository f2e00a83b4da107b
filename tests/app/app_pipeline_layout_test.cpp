// layout.pipeline_layout on a whole step: a layout that writes out the split the counted
// embedding and loss give runs that very step, and one that loads the last stage more runs
// slower; a stage may hold the embedding alone, and the MTP modules a chunk of their own.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::TempDir;

// Llama-3 8B cut to 6 layers over pp 2 x 2 virtual stages (tp 2, dp 2 on one DGX H100).
const char* kScenario =
    R"pb(model { preset: "llama3-8b" num_layers: 6 }
         hardware { preset: "dgx-h100" nodes: 1 }
         layout { tp: 2 pp: 2 dp: 2 virtual_stages: 2 }
         training { global_batch_size: 8 seq_length: 2048 schedule: INTERLEAVED_1F1B }
    )pb";

double step_time_s(TempDir& dir, const std::vector<std::string>& sets) {
  const auto result = testing::run_scenario_report(dir, kScenario, sets);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return result.report.value("step_time_s", 0.0);
}

TEST(PipelineLayoutRun, AWrittenOutSplitRunsTheSameStepAndAnUnevenOneASlowerOne) {
  TempDir dir;
  // 6 layers with the embedding and the loss counted: 8 over 4 chunks, 1 + 2 + 2 + 1.
  const double counted = step_time_s(
      dir, {"layout.account_for_embedding_in_split=true", "layout.account_for_loss_in_split=true"});
  const double written = step_time_s(dir, {"layout.pipeline_layout=Et|tt|tt|tL"});
  ASSERT_GT(counted, 0);
  EXPECT_DOUBLE_EQ(written, counted);
  // Chunks 1 and 3 run on stage 1: with three layers beside the output layer, it holds four
  // layers and the head against stage 0's two.
  const double uneven = step_time_s(dir, {"layout.pipeline_layout=Et|t|t|tttL"});
  EXPECT_GT(uneven, counted * 1.05);
}

// A first stage that holds the embedding alone gives the zero-bubble schedule no layer to weigh
// its passes by: it weighs them by the next stage's (it stopped with an internal error before).
TEST(PipelineLayoutRun, AStandaloneEmbeddingStageRunsUnderEverySchedule) {
  TempDir dir;
  for (const char* schedule : {"GPIPE", "ONE_F_ONE_B", "ZB_H1"}) {
    const std::vector<std::string> plain = {"layout.virtual_stages=1",
                                            std::string("training.schedule=") + schedule};
    std::vector<std::string> standalone = plain;
    standalone.push_back("layout.pipeline_layout=E|t*6L");
    const double balanced = step_time_s(dir, plain);
    const double lopsided = step_time_s(dir, standalone);
    ASSERT_GT(balanced, 0) << schedule;
    // Stage 1 runs all six layers and the head: slower than three a stage.
    EXPECT_GT(lopsided, balanced * 1.2) << schedule;
  }
}

// Megatron-Core's own example layout for DeepSeek-V3 (PP16 x VP2, the MTP module and the loss in
// chunks of their own) runs on the validation scenario as an interleaved what-if; with the MTP
// module beside the loss instead, the last chunk carries both and the step is longer.
TEST(PipelineLayoutRun, MegatronsDeepSeekV3LayoutRunsTheMtpModuleOnItsOwnChunk) {
  TempDir dir;
  const std::vector<std::string> interleaved = {"layout.account_for_embedding_in_split=false",
                                                "layout.account_for_loss_in_split=false",
                                                "layout.account_for_mtp_in_split=false",
                                                "training.schedule=INTERLEAVED_1F1B",
                                                "layout.virtual_stages=2",
                                                "training.global_batch_size=16384"};
  auto step_s = [&](const std::string& layout) {
    std::vector<std::string> sets = interleaved;
    sets.push_back("layout.pipeline_layout=" + layout);
    const auto result = testing::run_file_report(
        dir, std::string(RACKSIM_SOURCE_DIR) + "/scenarios/validation/deepseek-v3-h800.textproto",
        sets);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.report.value("step_time_s", 0.0);
  };
  const double standalone = step_s("Et*3|(tt|)*29,m|L");
  const double beside_loss = step_s("Et*3|(tt|)*29,|mL");
  ASSERT_GT(standalone, 0);
  EXPECT_LT(standalone, beside_loss * 0.9);
}

}  // namespace
}  // namespace racksim
