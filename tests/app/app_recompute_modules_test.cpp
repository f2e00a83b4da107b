// training.recompute_modules (Megatron-Core's --recompute-modules): selective recompute runs
// again what the list names (the attention's core by default; the layer's norms; the experts'
// activation), keeps their outputs out of the memory ledger, and counts only the attention's
// recompute as FLOPs; lists that make no sense are refused, naming the field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/report.h"
#include "config/scenario_loader.h"
#include "tests/support/run_racksim.h"
#include "tests/support/scenario_errors.h"
#include "workloads/training/memory_ledger.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

// Qwen3-30B-A3B cut to two layers on one DGX H100: EP8, two micro-batches of 4,096 tokens.
const char* kMoe =
    R"pb(model { preset: "qwen3-30b-a3b" num_layers: 2 }
         hardware { preset: "dgx-h100" nodes: 1 }
         layout { tp: 1 pp: 1 dp: 8 ep: 8 }
         training { global_batch_size: 16 seq_length: 4096 recompute: SELECTIVE }
    )pb";

TrainingPlan plan(const std::vector<std::string>& sets) {
  return resolve_training_plan(config::load_scenario_text(kMoe, "moe.textproto", sets).scenario);
}

struct Recomputed {
  int core = 0, norms = 0, activations = 0, other = 0;
};

// Rank 0's recompute kernels, by what they run again.
Recomputed recomputed(const TrainingPlan& p) {
  const TrainingStep step = build_training_step(p);
  Recomputed r;
  for (const Op& op : step.graph.ops()) {
    if (op.rank != 0 || op.phase != Phase::kRecompute) continue;
    const std::string name(step.graph.label(op.label));
    if (name.starts_with("attn.core")) {
      ++r.core;
    } else if (name == "attn.norm.recompute" || name == "mlp.norm.recompute") {
      ++r.norms;
    } else if (name == "moe.experts.act.recompute") {
      ++r.activations;
    } else {
      ++r.other;
    }
  }
  return r;
}

TEST(RecomputeModules, TheListChoosesWhatTheBackwardRunsAgain) {
  const Recomputed by_default = recomputed(plan({}));
  EXPECT_GT(by_default.core, 0);
  EXPECT_EQ(by_default.norms + by_default.activations + by_default.other, 0);
  // A recipe's ["layernorm", "moe_act"]: two norms and one activation per layer and micro-batch
  // (2 layers x 2 micro-batches), and no attention.
  const Recomputed recipe = recomputed(plan({"training.recompute_modules=LAYERNORM+MOE_ACT"}));
  EXPECT_EQ(recipe.core, 0);
  EXPECT_EQ(recipe.norms, 2 * 2 * 2);
  EXPECT_EQ(recipe.activations, 2 * 2);
  EXPECT_EQ(recipe.other, 0);
  const Recomputed all = recomputed(plan({"training.recompute_modules=CORE_ATTN+MOE_ACT"}));
  EXPECT_EQ(all.core, by_default.core);
  EXPECT_EQ(all.activations, 2 * 2);
  EXPECT_EQ(all.norms, 0);
}

// What each module keeps out of a layer's activations, in bytes: MOE_ACT the SwiGLU's output of
// every routed copy (4,096 tokens x 8 experts x 768 x 2 B); LAYERNORM the attention's input
// (4,096 x 2,048 x 2 B; the router's input is not in the ledger).
TEST(RecomputeModules, EachModuleKeepsItsOutputOutOfTheLedger) {
  const double plain = layer_activation_bytes(plan({}), 0);
  EXPECT_DOUBLE_EQ(plain - layer_activation_bytes(plan({"training.recompute_modules=MOE_ACT"}), 0),
                   4096.0 * 8 * 768 * 2);
  EXPECT_DOUBLE_EQ(
      plain - layer_activation_bytes(plan({"training.recompute_modules=LAYERNORM"}), 0),
      4096.0 * 2048 * 2);
}

// Only the attention's recompute is matrix work the hardware MFU counts.
TEST(RecomputeModules, OnlyTheAttentionsRecomputeCountsAsFlops) {
  const TrainingPlan recipe = plan({"training.recompute_modules=LAYERNORM+MOE_ACT"});
  EXPECT_DOUBLE_EQ(analysis::hardware_flops_per_token(recipe, false),
                   recipe.model.model_flops_per_token(recipe.training.seq_length, false));
  const TrainingPlan by_default = plan({});
  EXPECT_GT(analysis::hardware_flops_per_token(by_default, false),
            by_default.model.model_flops_per_token(by_default.training.seq_length, false));
}

TEST(RecomputeModules, ListsThatMakeNoSenseAreRefused) {
  for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
           {"training.recompute=NONE", "training.recompute_modules=MOE_ACT"},
           {"training.recompute_modules=MOE_ACT+MOE_ACT"},
           {"training.recompute_modules=MOE_ACT", "model.preset=llama3-8b", "layout.ep=1"},
       }) {
    const config::Caught caught = config::load_error(kMoe, "moe.textproto", sets);
    EXPECT_TRUE(caught.thrown) << sets.back();
    EXPECT_EQ(caught.field, "training.recompute_modules") << sets.back();
  }
  const config::Caught unknown =
      config::load_error(kMoe, "moe.textproto", {"training.recompute_modules=LAYERNORM+FOO"});
  EXPECT_TRUE(unknown.thrown);
  EXPECT_NE(unknown.detail.find("CORE_ATTN, LAYERNORM, MOE_ACT"), std::string::npos)
      << unknown.detail;
}

// `--set training.recompute_modules=` empties a list the file wrote: back to the default.
TEST(RecomputeModules, AnEmptySetClearsTheList) {
  std::string listed = kMoe;
  listed.replace(listed.find("recompute: SELECTIVE"), 20,
                 "recompute: SELECTIVE recompute_modules: [MOE_ACT]");
  const auto loaded = config::load_scenario_text(listed, "moe.textproto", {});
  EXPECT_EQ(loaded.scenario.training().recompute_modules_size(), 1);
  const auto cleared =
      config::load_scenario_text(listed, "moe.textproto", {"training.recompute_modules="});
  EXPECT_EQ(cleared.scenario.training().recompute_modules_size(), 0);
}

// The report names the modules when the list is not the default.
TEST(RecomputeModules, TheReportNamesWhatRanAgain) {
  const testing::TempDir dir;
  const auto run =
      testing::run_scenario_report(dir, kMoe, {"training.recompute_modules=LAYERNORM+MOE_ACT"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.report.value("description", "").find("recompute SELECTIVE (LAYERNORM, MOE_ACT)"),
            std::string::npos)
      << run.report.value("description", "");
}

}  // namespace
}  // namespace racksim
