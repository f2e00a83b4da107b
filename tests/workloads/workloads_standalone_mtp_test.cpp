// Multi-token-prediction modules in a pipeline chunk of their own (Megatron-Core's "...m|L"):
// the modules run on their chunk's stage with a copy of the embedding table, their output heads
// on the loss's chunk, and the transfers in between carry one hidden state per module besides
// the main one. The work of the step only moves.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/training_scenario.h"
#include "workloads/training/memory_ledger.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

using testing::scenario;

struct StepCounts {
  std::map<std::pair<RankId, std::string>, int> compute;  // (rank, label) -> forward ops
  std::map<std::pair<RankId, std::string>, double> sent;  // (rank, label) -> largest send
  double flops = 0;                                       // of the forward and backward passes
  int embedding_syncs = 0;
  std::vector<double> params;
};

// Llama 3 8B cut to 8 layers with one MTP module, TP1 over four plain stages (or two stages of
// two virtual stages each).
StepCounts step_with_layout(const std::string& layout, bool interleaved = false) {
  auto s = interleaved ? scenario(1, 2, 1, config::Training::INTERLEAVED_1F1B)
                       : scenario(1, 4, 1, config::Training::ONE_F_ONE_B);
  if (!interleaved) s.mutable_layout()->set_virtual_stages(1);
  s.mutable_model()->set_mtp_depth(1);
  s.mutable_layout()->set_pipeline_layout(layout);
  const TrainingStep step = build_training_step(resolve_training_plan(s));
  StepCounts counts;
  for (OpId id = 0; id < step.graph.ops().size(); ++id) {
    const Op& op = step.graph.op(id);
    const std::string& label = step.graph.label(op.label);
    if (op.kind == OpKind::kCompute) {
      // The passes' kernels (the optimizer also steps the MTP stage's copy of the table).
      if (op.phase != Phase::kOptimizer) counts.flops += op.amount;
      if (op.phase == Phase::kForward) ++counts.compute[{op.rank, label}];
    } else if (op.kind == OpKind::kSend) {
      double& largest = counts.sent[{op.rank, label}];
      largest = std::max(largest, op.amount);
    } else if (label == "embedding.grad.allreduce") {
      ++counts.embedding_syncs;
    }
  }
  counts.params = step.info.params_per_rank;
  return counts;
}

TEST(StandaloneMtp, TheModulesRunOnTheirChunkAndTheirHeadsWithTheLoss) {
  const StepCounts with_head = step_with_layout("Ett|ttt|ttt|mL");
  const StepCounts standalone = step_with_layout("Ett|ttt|tttm|L");
  const int micro_batches = 8;
  EXPECT_EQ((with_head.compute.at({3, "mtp.proj"})), micro_batches);
  EXPECT_EQ((standalone.compute.at({2, "mtp.proj"})), micro_batches);
  EXPECT_FALSE(standalone.compute.contains({3, "mtp.proj"}));
  EXPECT_EQ((standalone.compute.at({3, "mtp.head"})), micro_batches);
  EXPECT_FALSE(standalone.compute.contains({2, "mtp.head"}));
  // The same kernels, placed differently: every FLOP of the passes is still there.
  EXPECT_NEAR(standalone.flops, with_head.flops, 1e-12 * with_head.flops);
}

TEST(StandaloneMtp, TheHopsAfterTheModulesCarryTheirHiddenStatesToo) {
  const StepCounts standalone = step_with_layout("Ett|ttt|tttm|L");
  const double hidden_state = 1024.0 * 4096 * 2;  // tokens x hidden x BF16
  EXPECT_DOUBLE_EQ((standalone.sent.at({1, "send.activation"})), hidden_state);
  EXPECT_DOUBLE_EQ((standalone.sent.at({2, "send.activation"})), 2 * hidden_state);
  EXPECT_DOUBLE_EQ((standalone.sent.at({3, "send.gradient"})), 2 * hidden_state);
  EXPECT_DOUBLE_EQ((standalone.sent.at({2, "send.gradient"})), hidden_state);
}

TEST(StandaloneMtp, TheirStageHoldsTheModulesAndACopyOfTheTable) {
  auto s = scenario(1, 4, 1, config::Training::ONE_F_ONE_B);
  s.mutable_model()->set_mtp_depth(1);
  const TransformerModel model = resolve_training_plan(s).model;
  const StepCounts with_head = step_with_layout("Ett|ttt|ttt|mL");
  const StepCounts standalone = step_with_layout("Ett|ttt|tttm|L");
  EXPECT_NEAR(standalone.params[2] - with_head.params[2],
              model.mtp_params() + model.embedding_params(), 1);
  EXPECT_NEAR(with_head.params[3] - standalone.params[3], model.mtp_params(), 1);
  EXPECT_DOUBLE_EQ(standalone.params[0], with_head.params[0]);
  // Its copy's gradient is summed with the first stage's (Llama 3 unties its output layer, so
  // there is none to sum beside the output head).
  EXPECT_EQ(with_head.embedding_syncs, 0);
  EXPECT_EQ(standalone.embedding_syncs, 2);  // stage 0's and stage 2's share of one all-reduce
  // Interleaved, the MTP chunk may sit on the embedding's stage: it still builds its own copy
  // (Megatron-Core builds one per model chunk), summed there without a transfer.
  const StepCounts beside = step_with_layout("Etttt|tttt||mL", /*interleaved=*/true);
  const StepCounts own = step_with_layout("Etttt|tttt|m|L", /*interleaved=*/true);
  EXPECT_NEAR(own.params[0] - beside.params[0], model.mtp_params() + model.embedding_params(), 1);
  EXPECT_EQ(own.embedding_syncs, 0);
}

// An MTP module keeps what a layer like the last keeps, on the stage that runs it.
TEST(StandaloneMtp, TheLedgerCountsTheModulesActivationsWhereTheyRun) {
  auto s = scenario(1, 4, 1, config::Training::ONE_F_ONE_B);
  s.mutable_layout()->set_virtual_stages(1);
  auto ledger_of = [&](int mtp_depth, const std::string& layout, int stage) {
    s.mutable_model()->set_mtp_depth(mtp_depth);
    s.mutable_layout()->set_pipeline_layout(layout);
    const TrainingPlan plan = resolve_training_plan(s);
    return std::pair{memory_ledger(plan, stage).activations,
                     layer_activation_bytes(plan, static_cast<int>(plan.model.layers()) - 1)};
  };
  // 1F1B: stage s keeps 4 - s micro-batches' activations in flight.
  const auto [plain, layer] = ledger_of(0, "Ett|ttt|ttt|L", 2);
  const auto [standalone, ignored] = ledger_of(1, "Ett|ttt|tttm|L", 2);
  EXPECT_NEAR(standalone.bytes - plain.bytes, 2 * layer, 1e-6 * layer);
  EXPECT_NE(standalone.detail.find("3+1 MTP"), std::string::npos) << standalone.detail;
  const auto [with_head, unused] = ledger_of(1, "Ett|ttt|ttt|mL", 3);
  EXPECT_NEAR(with_head.bytes, layer, 1e-6 * layer);  // the last stage: one micro-batch
}

}  // namespace
}  // namespace racksim
