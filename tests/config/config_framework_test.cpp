// training.framework: a preset of the training fields that describe how a framework runs the
// step. It sets what the scenario leaves unset (the scenario's own fields and --set win), follows
// the scenario where the framework does (gradient dtype, TP overlap only with sequence
// parallelism), names itself in errors on the fields it gave, and refuses an unknown name.
#include <gtest/gtest.h>

#include <string>

#include "config/scenario_loader.h"
#include "tests/support/scenario_errors.h"
#include "workloads/training/framework_presets.h"

namespace racksim::config {
namespace {

// small_scenario with `training` fields spliced into its training section (after line 5).
std::string with_training(const std::string& training, const std::string& layout = "  tp: 2\n") {
  std::string text = small_scenario(layout);
  const std::string anchor = "  seq_length: 2048\n";
  return text.insert(text.find(anchor) + anchor.size(), training);
}

TEST(Framework, Megatron2021SetsItsStepAndFollowsTheDtype) {
  const LoadedScenario loaded = load_scenario_text(
      with_training("  dtype: FP16\n  framework: \"megatron-lm-2021\"\n"), "s.textproto", {});
  const Training& t = loaded.scenario.training();
  EXPECT_EQ(t.grad_reduce_dtype(), FP16);
  EXPECT_EQ(t.grad_accumulation(), Training::AUTOGRAD);
  EXPECT_EQ(t.attention_impl(), Training::MATERIALIZED);
  EXPECT_EQ(t.cross_entropy(), Training::FP32_UNFUSED);
  EXPECT_FALSE(t.overlap_grad_reduce());
  EXPECT_EQ(t.zero_stage(), 0);
  EXPECT_EQ(t.dtype(), FP16);  // the run's own choice stays the scenario's
  // Without a framework the defaults differ (FP32 reduce, fused accumulation): the preset acts.
  const Training plain =
      load_scenario_text(with_training("  dtype: FP16\n"), "s.textproto", {}).scenario.training();
  EXPECT_EQ(plain.grad_reduce_dtype(), FP32);
  EXPECT_EQ(plain.grad_accumulation(), Training::FUSED_IN_WGRAD);
}

// DeepSpeed's defaults (deepspeed/runtime/zero/config.py): 5e8-element buckets, overlap_comm
// only at stage 3, gradients reduced in the parameters' dtype; FSDP overlaps at stage 3 too.
TEST(Framework, DeepSpeedAndFsdpSetTheirZeroStageAndOverlap) {
  auto training_of = [](const std::string& framework) {
    const std::string fields = "  dtype: BF16\n  framework: \"" + framework + "\"\n";
    return load_scenario_text(with_training(fields), "s.textproto", {}).scenario.training();
  };
  for (int stage : {1, 2, 3}) {
    const Training t = training_of("deepspeed-zero" + std::to_string(stage));
    EXPECT_EQ(t.zero_stage(), stage);
    EXPECT_EQ(t.overlap_grad_reduce(), stage == 3) << "stage " << stage;
    EXPECT_EQ(t.grad_bucket_elements(), 500'000'000);
    EXPECT_EQ(t.grad_reduce_dtype(), BF16);
    EXPECT_EQ(t.grad_accumulation(), Training::AUTOGRAD);
    EXPECT_FALSE(t.has_attention_impl()) << "the model code's, not DeepSpeed's";
  }
  const Training fsdp = training_of("pytorch-fsdp");
  EXPECT_EQ(fsdp.zero_stage(), 3);
  EXPECT_TRUE(fsdp.overlap_grad_reduce());
  EXPECT_EQ(fsdp.grad_reduce_dtype(), BF16);
}

// DeepSeek-V3's report (arXiv 2412.19437, 3.2-3.3): DualPipe, ZeRO-1, FP32 gradients, BF16
// moments, FP8 dispatch under FP8. DualPipe only where it can run (an even pp), and a schedule
// the scenario writes wins.
TEST(Framework, HaiLlmRunsDualPipeWhereItCanWithDeepSeekV3sDtypes) {
  auto training_of = [](const std::string& fields, const std::string& layout) {
    return load_scenario_text(with_training(fields + "  framework: \"hai-llm\"\n", layout),
                              "s.textproto", {})
        .scenario.training();
  };
  const Training fp8 = training_of("  dtype: FP8\n", "  pp: 2\n");
  EXPECT_EQ(fp8.schedule(), Training::DUALPIPE);
  EXPECT_EQ(fp8.zero_stage(), 1);
  EXPECT_EQ(fp8.grad_reduce_dtype(), FP32);
  EXPECT_EQ(fp8.optimizer_moment_dtype(), BF16);
  EXPECT_EQ(fp8.moe_dispatch_dtype(), FP8);
  EXPECT_FALSE(fp8.tp_comm_overlap());
  const Training bf16 = training_of("  dtype: BF16\n", "  tp: 2\n");
  EXPECT_NE(bf16.schedule(), Training::DUALPIPE);  // no pipeline
  EXPECT_NE(bf16.moe_dispatch_dtype(), FP8);
  EXPECT_EQ(training_of("  schedule: ONE_F_ONE_B\n", "  pp: 2\n").schedule(),
            Training::ONE_F_ONE_B);
}

TEST(Framework, MegatronBridgeOverlapsTpOnlyUnderSequenceParallelism) {
  const std::string fp8 = "  dtype: FP8\n  framework: \"megatron-bridge\"\n";
  const Training with_sp =
      load_scenario_text(with_training(fp8, "  tp: 2\n  sequence_parallel: true\n"), "s.textproto",
                         {})
          .scenario.training();
  EXPECT_TRUE(with_sp.tp_comm_overlap());
  EXPECT_EQ(with_sp.grad_reduce_dtype(), BF16);  // FP8 GEMMs keep BF16 parameters
  EXPECT_EQ(with_sp.zero_stage(), 1);
  EXPECT_TRUE(with_sp.overlap_grad_reduce());
  EXPECT_EQ(with_sp.grad_accumulation(), Training::FUSED_IN_WGRAD);
  EXPECT_EQ(with_sp.fp8_scaling(), Training::CURRENT);  // the recipes' fp8_cs
  // Under BF16 there is nothing to scale: the framework leaves the field unset.
  EXPECT_FALSE(
      load_scenario_text(with_training("  framework: \"megatron-bridge\"\n"), "s.textproto", {})
          .scenario.training()
          .has_fp8_scaling());
  // Without sequence parallelism Megatron-Core refuses the overlap; the preset leaves it off
  // instead of handing the scenario an error it did not write.
  const Training without_sp =
      load_scenario_text(with_training(fp8), "s.textproto", {}).scenario.training();
  EXPECT_FALSE(without_sp.tp_comm_overlap());
}

TEST(Framework, TheScenarioAndSetWinOverTheFramework) {
  const LoadedScenario loaded =
      load_scenario_text(with_training("  framework: \"megatron-bridge\"\n  zero_stage: 0\n"),
                         "s.textproto", {"training.attention_impl=MATERIALIZED"});
  EXPECT_EQ(loaded.scenario.training().zero_stage(), 0);
  EXPECT_EQ(loaded.scenario.training().attention_impl(), Training::MATERIALIZED);
  EXPECT_TRUE(loaded.scenario.training().overlap_grad_reduce());  // still the framework's
  EXPECT_EQ(loaded.sources.find("training.zero_stage").line, 7);
  // --set names the framework too.
  const LoadedScenario set =
      load_scenario_text(with_training(""), "s.textproto", {"training.framework=megatron-lm-2021"});
  EXPECT_EQ(set.scenario.training().attention_impl(), Training::MATERIALIZED);
}

TEST(Framework, AFieldItGaveNamesTheFrameworkAsItsSource) {
  const LoadedScenario loaded =
      load_scenario_text(with_training("  framework: \"megatron-deepspeed\"\n"), "s.textproto", {});
  EXPECT_EQ(loaded.sources.find("training.attention_impl").file,
            "framework 'megatron-deepspeed' (inherited; set training.attention_impl to override "
            "it)");
}

TEST(Framework, AnUnknownNameIsAnInputErrorListingTheKnownOnes) {
  const Caught caught =
      load_error(with_training("  framework: \"megatron\"\n"), "scenario.textproto");
  ASSERT_TRUE(caught.thrown);
  EXPECT_EQ(caught.field, "training.framework");
  EXPECT_EQ(caught.where.line, 6);
  EXPECT_EQ(caught.detail,
            "unknown framework 'megatron'; known frameworks: megatron-lm-2021, "
            "megatron-deepspeed, megatron-bridge, deepspeed-zero1, deepspeed-zero2, "
            "deepspeed-zero3, pytorch-fsdp, hai-llm");
}

TEST(Framework, EveryNamedPresetHasAStepAndASource) {
  for (const std::string& name : framework_preset_names()) {
    EXPECT_TRUE(framework_training(name, Scenario{}).has_value()) << name;
    EXPECT_FALSE(framework_preset(name)->source.empty()) << name;
  }
  EXPECT_FALSE(framework_training("deepspeed", Scenario{}).has_value());
}

}  // namespace
}  // namespace racksim::config
