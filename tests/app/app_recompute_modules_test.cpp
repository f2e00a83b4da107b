// training.recompute_modules (Megatron-Core's --recompute-modules): selective recompute runs
// again what the list names (the attention's core by default; the layer's norms; the experts'
// activation; a latent attention's up-projections; a dense MLP, an MoE block or its shared experts
// whole), keeps their outputs out of the memory ledger, and counts the matrix work among them as
// FLOPs (not the norms' or activations'); lists that make no sense are refused, naming the field.
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

// DeepSeek-V3 cut to four layers (three dense, one MoE) on one DGX H100: multi-latent attention.
const char* kMla =
    R"pb(model { preset: "deepseek-v3" num_layers: 4 mtp_depth: 0 }
         hardware { preset: "dgx-h100" nodes: 1 }
         layout { tp: 1 pp: 1 dp: 8 ep: 8 }
         training { global_batch_size: 16 seq_length: 4096 recompute: SELECTIVE }
    )pb";

TrainingPlan plan(const std::vector<std::string>& sets, const char* text = kMoe) {
  return resolve_training_plan(config::load_scenario_text(text, "moe.textproto", sets).scenario);
}

struct Recomputed {
  int core = 0, norms = 0, activations = 0, up_projections = 0, rotary = 0, mlp = 0, moe = 0,
      shared = 0, other = 0;
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
    } else if (name == "attn.q_up.recompute" || name == "attn.kv_up.recompute") {
      ++r.up_projections;
    } else if (name.starts_with("attn.rope.")) {
      ++r.rotary;
    } else if (name.starts_with("moe.shared.")) {
      ++r.shared;
    } else if (name.starts_with("moe.")) {
      ++r.moe;
    } else if (name.starts_with("mlp.")) {
      ++r.mlp;
    } else {
      ++r.other;
    }
  }
  return r;
}

TEST(RecomputeModules, TheListChoosesWhatTheBackwardRunsAgain) {
  const Recomputed by_default = recomputed(plan({}));
  EXPECT_GT(by_default.core, 0);
  EXPECT_EQ(by_default.norms + by_default.activations + by_default.rotary + by_default.other, 0);
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
// every routed copy (4,096 tokens x 8 experts x 768 x 2 B); LAYERNORM the two norms' outputs, the
// attention's and the router's input (2 x 4,096 x 2,048 x 2 B); MLA_UP_PROJ DeepSeek-V3's
// queries, keys and values (4,096 tokens x 128 heads x (192 + 192 + 128) x 2 B).
TEST(RecomputeModules, EachModuleKeepsItsOutputOutOfTheLedger) {
  const double plain = layer_activation_bytes(plan({}), 0);
  EXPECT_DOUBLE_EQ(plain - layer_activation_bytes(plan({"training.recompute_modules=MOE_ACT"}), 0),
                   4096.0 * 8 * 768 * 2);
  EXPECT_DOUBLE_EQ(
      plain - layer_activation_bytes(plan({"training.recompute_modules=LAYERNORM"}), 0),
      2 * 4096.0 * 2048 * 2);
  for (const int layer : {0, 3}) {  // a dense layer and the MoE one
    const double mla = layer_activation_bytes(plan({}, kMla), layer);
    EXPECT_DOUBLE_EQ(
        mla - layer_activation_bytes(plan({"training.recompute_modules=MLA_UP_PROJ"}, kMla), layer),
        4096.0 * 128 * (192 + 192 + 128) * 2)
        << layer;
  }
}

// MLA_UP_PROJ runs the queries' and the keys' and values' up-projections again, one of each per
// layer and micro-batch (4 layers x 2 micro-batches), with the rotary embedding of the queries'
// and the shared key's RoPE parts (Megatron-Core: "the MLA up projection and RoPE applying
// parts"), and nothing else.
TEST(RecomputeModules, UpProjectionsRunAgainBeforeTheLayersBackward) {
  const Recomputed r = recomputed(plan({"training.recompute_modules=MLA_UP_PROJ"}, kMla));
  EXPECT_EQ(r.up_projections, 2 * 4 * 2);
  EXPECT_EQ(r.rotary, 2 * 4 * 2);
  EXPECT_EQ(r.core + r.norms + r.activations + r.other, 0);
}

// Rank 0's forward kernels and collectives of one layer and micro-batch whose names start with
// `prefix`.
int forward_steps(const TrainingPlan& p, const std::string& prefix) {
  const TrainingStep step = build_training_step(p);
  int n = 0;
  for (const Op& op : step.graph.ops()) {
    if (op.rank != 0 || op.phase != Phase::kForward || op.micro_batch != 0) continue;
    n += std::string(step.graph.label(op.label)).starts_with(prefix);
  }
  return n / static_cast<int>(p.model.layers());
}

// MLP, MOE and SHARED_EXPERTS run their block's forward again, kernel for kernel and collective
// for collective (in each layer and micro-batch), and drop what the block keeps beyond its input: a
// dense MLP's SwiGLU intermediates (Llama 3 8B at TP2: 4,096 tokens x 3 x 14,336 / 2 x 2 B), all
// of an MoE block's, DeepSeek-V3's shared expert's (4,096 tokens x 3 x 2,048 x 2 B).
TEST(RecomputeModules, WholeBlocksRunAgainAndKeepOnlyTheirInput) {
  const std::vector<std::string> dense = {"model.preset=llama3-8b", "model.num_layers=2",
                                          "layout.ep=1", "layout.tp=2", "layout.dp=4"};
  std::vector<std::string> mlp = dense;
  mlp.push_back("training.recompute_modules=MLP");
  const TrainingPlan mlp_plan = plan(mlp);
  const Recomputed dense_mlp = recomputed(mlp_plan);
  const int passes = 2 * mlp_plan.micro_batches;  // layers x micro-batches
  EXPECT_EQ(dense_mlp.mlp, passes * (forward_steps(mlp_plan, "mlp.") - 2));  // not the norm, add
  EXPECT_GT(dense_mlp.mlp, 0);
  EXPECT_EQ(dense_mlp.core + dense_mlp.norms + dense_mlp.moe + dense_mlp.rotary + dense_mlp.other,
            0);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(plan(dense), 0) - layer_activation_bytes(mlp_plan, 0),
                   4096.0 * 3 * 14336 / 2 * 2);

  const TrainingPlan moe_plan = plan({"training.recompute_modules=MOE"});
  const Recomputed moe = recomputed(moe_plan);
  EXPECT_EQ(moe.moe + moe.activations,
            2 * moe_plan.micro_batches * forward_steps(moe_plan, "moe."));
  EXPECT_EQ(moe.core + moe.norms + moe.mlp + moe.rotary + moe.other, 0);
  const TrainingPlan plain = plan({});
  const double experts = 4096.0 * 128 * 4 + 4096.0 * 8 * (2048 + 3 * 768) * 2;  // scores, copies
  EXPECT_DOUBLE_EQ(layer_activation_bytes(plain, 0) - layer_activation_bytes(moe_plan, 0), experts);

  const TrainingPlan shared_plan = plan({"training.recompute_modules=SHARED_EXPERTS"}, kMla);
  const Recomputed shared = recomputed(shared_plan);
  EXPECT_GT(shared.shared, 0);
  EXPECT_EQ(shared.core + shared.moe + shared.mlp + shared.rotary + shared.other, 0);
  EXPECT_DOUBLE_EQ(
      layer_activation_bytes(plan({}, kMla), 3) - layer_activation_bytes(shared_plan, 3),
      4096.0 * 3 * 2048 * 2);
}

// The attention's recompute, the up-projections' and whole blocks' are matrix work the hardware
// MFU counts; the norms' and activations' are not. DeepSeek-V3's up-projections: per layer 1,536 x
// 128 x 192 (queries) + 512 x 128 x (128 + 128) (keys and values) weights, 2 FLOPs each per token.
TEST(RecomputeModules, OnlyMatrixWorkCountsAsFlops) {
  const TrainingPlan up = plan({"training.recompute_modules=MLA_UP_PROJ"}, kMla);
  EXPECT_DOUBLE_EQ(analysis::hardware_flops_per_token(up, false) -
                       up.model.model_flops_per_token(up.training.seq_length, false),
                   2 * 4 * (1536.0 * 128 * 192 + 512.0 * 128 * 256));
  // MOE: the router and a token's 8 experts of 3 x 2,048 x 768 in both of Qwen3-30B's layers.
  const TrainingPlan moe = plan({"training.recompute_modules=MOE"});
  EXPECT_DOUBLE_EQ(analysis::hardware_flops_per_token(moe, false) -
                       moe.model.model_flops_per_token(moe.training.seq_length, false),
                   2 * 2 * (2048.0 * 128 + 8 * 3 * 2048.0 * 768));
  const TrainingPlan recipe = plan({"training.recompute_modules=LAYERNORM+MOE_ACT"});
  EXPECT_DOUBLE_EQ(analysis::hardware_flops_per_token(recipe, false),
                   recipe.model.model_flops_per_token(recipe.training.seq_length, false));
  const TrainingPlan by_default = plan({});
  EXPECT_GT(analysis::hardware_flops_per_token(by_default, false),
            by_default.model.model_flops_per_token(by_default.training.seq_length, false));
}

// The busiest rank of a validation scenario, with `sets`.
MemoryLedger busiest(const std::string& scenario, const std::vector<std::string>& sets) {
  const std::string path = std::string(RACKSIM_SOURCE_DIR) + "/scenarios/validation/" + scenario;
  return worst_memory_ledger(resolve_training_plan(config::load_scenario(path, sets).scenario));
}

// Two published DeepSeek-V3 runs recompute the MLA up-projections (DeepSeek's report on 2,048
// H800: the norms, the up-projections and the MoE SwiGLU's output; NVIDIA's GB200 recipe: the
// up-projections; docs/validation.md, "7 December, last"). On the H800 the ledger says they must:
// without it the busiest rank does not fit. On the GB200 it fits either way, but without the
// recompute within 4 % of the driver's total, which the CUDA context and NCCL's buffers (not in
// the ledger) would take; with it 40 GB stay free.
TEST(RecomputeModules, DeepSeekV3NeedsItsPublishedRecompute) {
  const std::string h800 = "deepseek-v3-h800.textproto";
  EXPECT_TRUE(busiest(h800, {}).fits());
  EXPECT_FALSE(busiest(h800, {"training.recompute_modules=LAYERNORM+MOE_ACT"}).fits());
  const std::vector<std::string> gb200 = {"hardware.preset=gb200-nvl72",
                                          "hardware.nodes=64",
                                          "hardware.gpus_per_node=4",
                                          "hardware.scale_up.domain_size=64",
                                          "model.preset=deepseek-v3",
                                          "model.mtp_depth=0",
                                          "layout.tp=1",
                                          "layout.pp=4",
                                          "layout.virtual_stages=4",
                                          "layout.ep=64",
                                          "layout.dp=64",
                                          "layout.sequence_parallel=false",
                                          "layout.account_for_embedding_in_split=false",
                                          "layout.account_for_loss_in_split=false",
                                          "layout.pipeline_layout=Et*4|(t*4|)*14tL",
                                          "training.dtype=BF16",
                                          "training.micro_batch_size=1",
                                          "training.global_batch_size=4096",
                                          "training.seq_length=4096",
                                          "training.moe_a2a_overlap=false"};
  std::vector<std::string> recipe = gb200;
  recipe.push_back("training.recompute=SELECTIVE");
  recipe.push_back("training.recompute_modules=MLA_UP_PROJ");
  const MemoryLedger with = busiest("megatron-bridge-moe.textproto", recipe);
  EXPECT_LT(with.peak_bytes(), with.capacity_bytes - 40e9);
  const MemoryLedger without = busiest("megatron-bridge-moe.textproto", gb200);
  EXPECT_TRUE(without.fits());
  EXPECT_GT(without.peak_bytes(), 0.96 * without.capacity_bytes);
}

TEST(RecomputeModules, ListsThatMakeNoSenseAreRefused) {
  for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
           {"training.recompute=NONE", "training.recompute_modules=MOE_ACT"},
           {"training.recompute_modules=MOE_ACT+MOE_ACT"},
           {"training.recompute_modules=MOE_ACT", "model.preset=llama3-8b", "layout.ep=1"},
           {"training.recompute_modules=MLA_UP_PROJ"},
           {"training.recompute_modules=MLP"},             // every Qwen3 layer is an MoE block
           {"training.recompute_modules=SHARED_EXPERTS"},  // Qwen3 has none
           {"training.recompute_modules=MOE+MOE_ACT"},
           {"training.recompute_modules=MOE", "model.preset=llama3-8b", "layout.ep=1"},
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
