// Which layers and ops recompute runs again beyond Megatron-Core's modules: full recompute of
// some layers of each model chunk (training.recompute_method BLOCK, Megatron-Core's
// --recompute-method block; EVERY_NTH, torchtitan's layer-level selective checkpointing) and
// torchtitan's op-level policy (recompute_modules ALTERNATE_MATMULS). The backward runs the
// chosen layers' whole forward again and nothing of the others; the memory ledger keeps a chosen
// layer's input alone and the others' every activation; the op policy runs the key, output and
// up projections again with the norms, the activation and the residual adds, and keeps what the
// algebra below says.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "app/studies/recompute_advice.h"
#include "config/scenario_loader.h"
#include "tests/support/run_racksim.h"
#include "tests/support/scenario_errors.h"
#include "workloads/training/memory_ledger.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

// Llama 3 8B cut to eight layers on one DGX H100: DP8, one micro-batch of 4,096 tokens.
const char* kLlama =
    R"pb(model { preset: "llama3-8b" num_layers: 8 }
         hardware { preset: "dgx-h100" nodes: 1 }
         layout { tp: 1 pp: 1 dp: 8 }
         training { global_batch_size: 8 micro_batch_size: 1 seq_length: 4096 recompute: FULL }
    )pb";

TrainingPlan plan(const std::vector<std::string>& sets) {
  return resolve_training_plan(
      config::load_scenario_text(kLlama, "llama.textproto", sets).scenario);
}

// Rank 0's recompute kernels: their FLOPs by layer.
std::map<int, double> recompute_flops_by_layer(const TrainingPlan& p) {
  const TrainingStep step = build_training_step(p);
  std::map<int, double> flops;
  for (const Op& op : step.graph.ops()) {
    if (op.rank == 0 && op.phase == Phase::kRecompute) flops[op.layer] += op.amount;
  }
  return flops;
}

// Forward FLOPs per token of all the model's layers: what full recompute of every layer runs
// again.
double all_layers_forward_flops(const TransformerModel& m, int64_t seq) {
  double flops = 0;
  for (int l = 0; l < m.layers(); ++l) flops += m.layer_forward_flops_per_token(l, seq, false);
  return flops;
}

std::set<int> layers_of(const std::map<int, double>& by_layer) {
  std::set<int> layers;
  for (const auto& [layer, flops] : by_layer) layers.insert(layer);
  return layers;
}

TEST(RecomputeLayers, TheMethodChoosesTheLayersOfEachChunk) {
  EXPECT_EQ(layers_of(recompute_flops_by_layer(plan({}))), (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  const std::vector<std::string> every_second = {"training.recompute_method=EVERY_NTH",
                                                 "training.recompute_num_layers=2"};
  EXPECT_EQ(layers_of(recompute_flops_by_layer(plan(every_second))), (std::set<int>{1, 3, 5, 7}));
  EXPECT_EQ(layers_of(recompute_flops_by_layer(
                plan({"training.recompute_method=EVERY_NTH", "training.recompute_num_layers=3"}))),
            (std::set<int>{2, 5}));
  EXPECT_EQ(layers_of(recompute_flops_by_layer(
                plan({"training.recompute_method=BLOCK", "training.recompute_num_layers=3"}))),
            (std::set<int>{0, 1, 2}));
  // A chunk with fewer layers than the count recomputes them all, as Megatron-Core does.
  EXPECT_EQ(layers_of(recompute_flops_by_layer(
                plan({"training.recompute_method=BLOCK", "training.recompute_num_layers=20"}))),
            (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  // Counted within each pipeline stage's chunk: the first layer of each of two stages.
  const TrainingPlan staged = plan({"layout.pp=2", "layout.dp=4", "training.recompute_method=BLOCK",
                                    "training.recompute_num_layers=1"});
  EXPECT_EQ(staged.training.recomputed_layers,
            (std::vector<bool>{true, false, false, false, true, false, false, false}));
}

// Each chosen layer runs its whole forward again, as full recompute of every layer does.
TEST(RecomputeLayers, AChosenLayerRunsItsWholeForwardAgain) {
  const std::map<int, double> all = recompute_flops_by_layer(plan({}));
  const std::map<int, double> half = recompute_flops_by_layer(
      plan({"training.recompute_method=EVERY_NTH", "training.recompute_num_layers=2"}));
  for (const auto& [layer, flops] : half) EXPECT_DOUBLE_EQ(flops, all.at(layer)) << layer;
  // The MFU's hardware FLOPs count half the layers' forward again.
  const TrainingPlan p =
      plan({"training.recompute_method=EVERY_NTH", "training.recompute_num_layers=2"});
  const double model = p.model.model_flops_per_token(p.training.seq_length, false);
  const double layer_forward = all_layers_forward_flops(p.model, p.training.seq_length);
  EXPECT_DOUBLE_EQ(analysis::hardware_flops_per_token(p, false), model + layer_forward / 2);
}

// Unlike layers: with 128-token windows on the even layers, every second layer is one of full
// attention, and MFU B counts those layers' forward again, not half of all the layers'.
TEST(RecomputeLayers, MfuCountsTheForwardOfTheLayersTaken) {
  const TrainingPlan p =
      plan({"model.hybrid.layer_pattern=WFWFWFWF", "model.hybrid.window_tokens=128",
            "training.recompute_method=EVERY_NTH", "training.recompute_num_layers=2"});
  const TransformerModel& m = p.model;
  const int64_t seq = p.training.seq_length;
  const double full_layer = m.layer_forward_flops_per_token(1, seq, false);
  EXPECT_GT(full_layer, m.layer_forward_flops_per_token(0, seq, false));
  EXPECT_DOUBLE_EQ(analysis::hardware_flops_per_token(p, false),
                   m.model_flops_per_token(seq, false) + 4 * full_layer);
  EXPECT_GT(4 * full_layer, all_layers_forward_flops(m, seq) / 2);
}

// The ledger keeps a chosen layer's input alone and every activation of the others.
TEST(RecomputeLayers, TheLedgerKeepsEachLayerAsItsChoiceSays) {
  const TrainingPlan full = plan({});
  const TrainingPlan none = plan({"training.recompute=NONE"});
  const TrainingPlan half =
      plan({"training.recompute_method=EVERY_NTH", "training.recompute_num_layers=2"});
  const double hidden_bytes = 4096.0 * 4096 * 2;  // the layer's input: tokens x hidden x 2 B
  EXPECT_DOUBLE_EQ(layer_activation_bytes(full, 1), hidden_bytes);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(half, 1), hidden_bytes);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(half, 0), layer_activation_bytes(none, 0));
  EXPECT_GT(layer_activation_bytes(half, 0), 10 * hidden_bytes);
}

// torchtitan's op-level policy on a Llama layer: the key, output and up projections run again
// (its second, fourth and sixth matmuls), with the norms, the rotary embedding of the queries and
// keys (the attention kernel's inputs), the SwiGLU and the residual adds.
TEST(RecomputeLayers, AlternateMatmulsRunTheEvenMatmulsAgain) {
  const TrainingPlan p =
      plan({"training.recompute=SELECTIVE", "training.recompute_modules=ALTERNATE_MATMULS"});
  const TrainingStep step = build_training_step(p);
  std::set<std::string> names;
  double gemm_flops = 0;
  for (const Op& op : step.graph.ops()) {
    if (op.rank != 0 || op.phase != Phase::kRecompute || op.layer != 0) continue;
    names.insert(std::string(step.graph.label(op.label)));
    if (op.op_class == OpClass::kGemm) gemm_flops += op.amount;
  }
  EXPECT_EQ(names, (std::set<std::string>{"attn.norm.recompute", "attn.k.recompute",
                                          "attn.rope.q.recompute", "attn.rope.k.recompute",
                                          "attn.proj.recompute", "attn.residual.recompute",
                                          "mlp.norm.recompute", "mlp.up.recompute",
                                          "mlp.act.recompute", "mlp.residual.recompute"}));
  const double tokens = 4096, h = 4096, kv = 8 * 128, f = 14336;
  EXPECT_DOUBLE_EQ(gemm_flops, 2 * tokens * h * (kv + h + f));
  EXPECT_DOUBLE_EQ(
      analysis::hardware_flops_per_token(p, false),
      p.model.model_flops_per_token(p.training.seq_length, false) + 8 * 2 * h * (kv + h + f));
  // Kept: the input and the down projection's output (2h), the query, value and attention
  // outputs (h + kv + h) and the gate's (f), each 2 B a token.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(p, 0), tokens * 2 * (2 * h + h + kv + h + f));
}

// Megatron-Core's uniform method in groups: every layer runs again, a group keeps its first
// layer's input alone, and its backward rematerialises the whole group at once (eight layers
// here, more than the output layer's logits).
TEST(RecomputeLayers, UniformGroupsKeepOneInputAndRematerialiseTheGroup) {
  const std::vector<std::string> uniform = {"training.recompute_method=UNIFORM",
                                            "training.recompute_num_layers=8"};
  EXPECT_EQ(recompute_flops_by_layer(plan(uniform)), recompute_flops_by_layer(plan({})));
  const TrainingPlan grouped = plan(uniform);
  const double hidden_bytes = 4096.0 * 4096 * 2;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(grouped, 0), hidden_bytes);
  for (int l = 1; l < 8; ++l) EXPECT_DOUBLE_EQ(layer_activation_bytes(grouped, l), 0) << l;
  const TrainingPlan none = plan({"training.recompute=NONE"});
  double group_bytes = 0;
  for (int l = 0; l < 8; ++l) group_bytes += layer_activation_bytes(none, l);
  const MemoryLedger ledger = worst_memory_ledger(grouped);
  EXPECT_DOUBLE_EQ(ledger.largest_transient.bytes, group_bytes);
  EXPECT_NE(ledger.largest_transient.name.find("8 layers"), std::string::npos);
  // Groups of three over eight layers: 3 + 3 + 2, three inputs kept.
  const TrainingPlan threes =
      plan({"training.recompute_method=UNIFORM", "training.recompute_num_layers=3"});
  EXPECT_EQ(threes.training.recompute_group_layers, (std::vector<int>{3, 0, 0, 3, 0, 0, 2, 0}));
  double kept = 0;
  for (int l = 0; l < 8; ++l) kept += layer_activation_bytes(threes, l);
  EXPECT_DOUBLE_EQ(kept, 3 * hidden_bytes);
}

// The op policy's backward rematerialises what it did not keep of a layer: with a small
// vocabulary (the loss's logits no longer the largest), that is the ledger's transient.
TEST(RecomputeLayers, TheOpPolicyRematerialisesWhatItDoesNotKeep) {
  const TrainingPlan op =
      plan({"training.recompute=SELECTIVE", "training.recompute_modules=ALTERNATE_MATMULS",
            "model.vocab_size=1024"});
  const TrainingPlan none = plan({"training.recompute=NONE", "model.vocab_size=1024"});
  const MemoryLedger ledger = worst_memory_ledger(op);
  EXPECT_DOUBLE_EQ(ledger.largest_transient.bytes,
                   layer_activation_bytes(none, 0) - layer_activation_bytes(op, 0));
  EXPECT_NE(ledger.largest_transient.name.find("op policy"), std::string::npos);
}

TEST(RecomputeLayers, ChoicesThatMakeNoSenseAreRefused) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"training.recompute=SELECTIVE", "training.recompute_method=BLOCK",
        "training.recompute_num_layers=2"},
       "training.recompute_method"},
      {{"training.recompute_method=BLOCK"}, "training.recompute_num_layers"},
      {{"training.recompute_method=EVERY_NTH", "training.recompute_num_layers=0"},
       "training.recompute_num_layers"},
      {{"training.recompute_num_layers=2"}, "training.recompute_num_layers"},
      {{"training.recompute_method=UNIFORM"}, "training.recompute_num_layers"},
      {{"training.recompute=SELECTIVE", "training.recompute_modules=ALTERNATE_MATMULS+LAYERNORM"},
       "training.recompute_modules"},
      {{"training.recompute=SELECTIVE", "training.recompute_modules=ALTERNATE_MATMULS",
        "layout.tp=2", "layout.dp=4"},
       "training.recompute_modules"},
      {{"training.recompute=SELECTIVE", "training.recompute_modules=ALTERNATE_MATMULS",
        "model.preset=qwen3-30b-a3b", "model.num_layers=2", "layout.ep=8"},
       "training.recompute_modules"},
      {{"training.recompute=SELECTIVE", "training.recompute_modules=ALTERNATE_MATMULS",
        "model.hidden_dropout=0.1"},
       "training.recompute_modules"},
      {{"training.recompute=SELECTIVE", "training.recompute_modules=ALTERNATE_MATMULS",
        "training.attention_impl=MATERIALIZED"},
       "training.recompute_modules"},
  };
  for (const auto& [sets, field] : cases) {
    const config::Caught caught = config::load_error(kLlama, "llama.textproto", sets);
    EXPECT_TRUE(caught.thrown) << sets.back();
    EXPECT_EQ(caught.field, field) << sets.back() << ": " << caught.detail;
  }
}

// racksim memory's suggestion for a rank out of memory: the fewest layers of each chunk whose full
// recompute makes it fit, one fewer does not; none where it fits already.
TEST(RecomputeLayers, TheFewestBlockLayersThatFitAreFound) {
  const std::vector<std::string> large = {"training.recompute=NONE", "training.micro_batch_size=6",
                                          "training.global_batch_size=48"};
  const auto scenario = [&](std::vector<std::string> sets) {
    sets.insert(sets.begin(), large.begin(), large.end());
    return config::load_scenario_text(kLlama, "llama.textproto", sets).scenario;
  };
  const auto fits = [&](int layers) {
    return worst_memory_ledger(resolve_training_plan(scenario(
                                   {"training.recompute=FULL", "training.recompute_method=BLOCK",
                                    "training.recompute_num_layers=" + std::to_string(layers)})))
        .fits();
  };
  const auto advise = [](const config::Scenario& s) {
    const TrainingPlan p = resolve_training_plan(s);
    return least_block_recompute(s, p, worst_memory_ledger(p));
  };
  ASSERT_FALSE(worst_memory_ledger(resolve_training_plan(scenario({}))).fits());
  const auto advice = advise(scenario({}));
  ASSERT_TRUE(advice.has_value());
  // By hand: 96.6 GB against 85.5, 11.1 over; a layer taken keeps its 0.20 GB input instead of
  // its 3.42 GB of activations, so three free 9.7 GB (no fit), four 12.9 GB (1.8 GB to spare,
  // under the 2 GB headroom) and five 16.1 GB.
  EXPECT_EQ(advice->num_layers, 5);
  EXPECT_TRUE(fits(4));
  EXPECT_FALSE(fits(3));
  EXPECT_LE(advice->peak_bytes, advice->capacity_bytes - kMarginalSpareBytes);
  EXPECT_GT(advice->peak_bytes + 3.2e9, advice->capacity_bytes - kMarginalSpareBytes);
  EXPECT_FALSE(advise(scenario({"training.micro_batch_size=1", "training.global_batch_size=8"}))
                   .has_value());
}

// The report says how many layers full recompute took when not all.
TEST(RecomputeLayers, TheReportCountsTheLayers) {
  const testing::TempDir dir;
  const auto run = testing::run_scenario_report(
      dir, kLlama, {"training.recompute_method=BLOCK", "training.recompute_num_layers=3"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.report.value("description", "").find("recompute FULL (3 of 8 layers)"),
            std::string::npos)
      << run.report.value("description", "");
  const auto grouped = testing::run_scenario_report(
      dir, kLlama, {"training.recompute_method=UNIFORM", "training.recompute_num_layers=4"});
  ASSERT_EQ(grouped.exit_code, 0) << grouped.err;
  EXPECT_NE(grouped.report.value("description", "").find("recompute FULL (uniform groups of 4"),
            std::string::npos)
      << grouped.report.value("description", "");
}

}  // namespace
}  // namespace racksim
