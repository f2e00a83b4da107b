// training.defer_embedding_wgrad: the output layer's weight gradients deferred into the drain
// after the last stage's last backward pass, as Megatron-Core's defer_embedding_wgrad_compute
// does, and what the memory ledger keeps for them.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/support/training_scenario.h"
#include "workloads/training/memory_ledger.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

using testing::scenario;

TEST(TrainingStep, DeferredHeadWeightGradientsRunAfterTheLastPass) {
  auto s = scenario(1, 2, 1, config::Training::ONE_F_ONE_B);
  auto head_ops = [&](bool defer) {
    s.mutable_training()->set_defer_embedding_wgrad(defer);
    if (defer) s.mutable_training()->set_wgrad_deferral_limit(3);
    const auto step = build_training_step(resolve_training_plan(s));
    std::map<std::string, std::vector<std::pair<OpId, int>>> ops;  // label -> (id, micro-batch)
    double flops = 0;
    OpId last_pass_op = 0;
    for (OpId id = 0; id < step.graph.ops().size(); ++id) {
      const Op& op = step.graph.op(id);
      if (op.rank != 1 || op.kind != OpKind::kCompute) continue;
      const std::string& label = step.graph.label(op.label);
      if (label.starts_with("lm_head.") && op.phase != Phase::kForward) {
        ops[label].push_back({id, op.micro_batch});
        flops += op.amount;
      }
      if (op.phase == Phase::kBackward) last_pass_op = id;
    }
    return std::tuple{ops, flops, last_pass_op};
  };
  const auto [fused, fused_flops, fused_last] = head_ops(false);
  const auto [deferred, deferred_flops, last_backward] = head_ops(true);
  EXPECT_EQ(fused.at("lm_head.bwd").size(), 8u);
  EXPECT_FALSE(fused.contains("lm_head.wgrad"));
  ASSERT_EQ(deferred.at("lm_head.wgrad").size(), 3u);
  EXPECT_EQ(deferred.at("lm_head.dgrad").size(), 3u);
  EXPECT_EQ(deferred.at("lm_head.bwd").size(), 5u);
  for (int i = 0; i < 3; ++i) {
    const auto [id, micro_batch] = deferred.at("lm_head.wgrad")[i];
    EXPECT_EQ(micro_batch, i);
    EXPECT_GT(id, last_backward);  // after every backward kernel of the stage
  }
  EXPECT_NEAR(deferred_flops, fused_flops, 1e-9 * fused_flops);
  // Megatron-Core keeps each deferred micro-batch's input and logits gradient in BF16.
  const TrainingPlan plan = resolve_training_plan(s);
  const double hidden = 4096, vocab = 128256, tokens = 1024;
  double kept = 0;
  for (const MemoryItem& item : memory_ledger(plan, 1).static_items) {
    if (item.name == "deferred lm_head wgrad inputs") kept = item.bytes;
  }
  EXPECT_DOUBLE_EQ(kept, 3 * 2 * (tokens * hidden + tokens * vocab));
  for (const MemoryItem& item : memory_ledger(plan, 0).static_items) {
    EXPECT_NE(item.name, "deferred lm_head wgrad inputs");  // the first stage holds no head
  }
}

TEST(TrainingStep, TheDrainGathersEachDeferredInputOverTpBeforeItsGemm) {
  // Under sequence parallelism each deferred micro-batch keeps its TP shard of the output
  // layer's input; Megatron-Core's drain all-gathers it before the weight-gradient GEMM, the
  // next gather running under the current GEMM.
  auto s = scenario(2, 2, 1, config::Training::ONE_F_ONE_B);
  s.mutable_layout()->set_sequence_parallel(true);
  s.mutable_training()->set_defer_embedding_wgrad(true);
  s.mutable_training()->set_wgrad_deferral_limit(3);
  const auto step = build_training_step(resolve_training_plan(s));
  const RankId last_stage_rank = 2;  // TP rank 0 of pipeline stage 1
  std::vector<OpId> gathers, wgrads;
  for (OpId id = 0; id < step.graph.ops().size(); ++id) {
    const Op& op = step.graph.op(id);
    if (op.rank != last_stage_rank) continue;
    const std::string& label = step.graph.label(op.label);
    if (label == "lm_head.wgrad_input.allgather") gathers.push_back(id);
    if (label == "lm_head.wgrad") wgrads.push_back(id);
  }
  ASSERT_EQ(gathers.size(), 3u);
  ASSERT_EQ(wgrads.size(), 3u);
  const double hidden = 4096, tokens = 1024;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(step.graph.op(gathers[i]).kind, OpKind::kCollective);
    EXPECT_DOUBLE_EQ(step.graph.op(gathers[i]).amount, tokens * hidden * 2);  // BF16, gathered
    const auto deps = step.graph.deps(wgrads[i]);
    EXPECT_NE(std::find(deps.begin(), deps.end(), gathers[i]), deps.end()) << i;
    if (i > 0) {
      const auto gather_deps = step.graph.deps(gathers[i]);
      EXPECT_NE(std::find(gather_deps.begin(), gather_deps.end(), gathers[i - 1]),
                gather_deps.end())
          << i;
      EXPECT_EQ(std::find(deps.begin(), deps.end(), gathers[i - 1]), deps.end()) << i;
    }
  }
  // Without sequence parallelism the input is whole on every TP rank: nothing to gather.
  s.mutable_layout()->set_sequence_parallel(false);
  const auto whole = build_training_step(resolve_training_plan(s));
  for (OpId id = 0; id < whole.graph.ops().size(); ++id) {
    EXPECT_NE(whole.graph.label(whole.graph.op(id).label), "lm_head.wgrad_input.allgather");
  }
}

TEST(TrainingStep, OnlyTheOutputLayersWeightGradientIsDeferred) {
  // With multi-token prediction the head block holds the MTP modules too. Megatron-Core defers
  // the output layer's weight gradient, for its own call and for the modules' calls on it, and
  // counts the limit in those calls: limit 6 with one module is three micro-batches. The
  // modules' other weight gradients run in their backward pass.
  auto s = scenario(1, 2, 1, config::Training::ONE_F_ONE_B);
  s.mutable_model()->set_mtp_depth(1);
  s.mutable_training()->set_defer_embedding_wgrad(true);
  s.mutable_training()->set_wgrad_deferral_limit(6);
  const auto step = build_training_step(resolve_training_plan(s));
  OpId last_backward = 0;
  std::vector<OpId> output_wgrads;
  int mtp_wgrads = 0, drained_mtp = 0;
  for (OpId id = 0; id < step.graph.ops().size(); ++id) {
    const Op& op = step.graph.op(id);
    if (op.rank != 1 || op.kind != OpKind::kCompute) continue;
    const std::string& label = step.graph.label(op.label);
    if (op.phase == Phase::kBackward) last_backward = id;
    if (label == "lm_head.wgrad" || label == "mtp.head.wgrad") output_wgrads.push_back(id);
    if (label.starts_with("mtp.") && !label.starts_with("mtp.head") && label.ends_with(".wgrad")) {
      ++mtp_wgrads;
      drained_mtp += op.phase == Phase::kBackwardWeight ? 1 : 0;
    }
  }
  ASSERT_EQ(output_wgrads.size(), 6u);  // three micro-batches, two calls each
  for (const OpId id : output_wgrads) EXPECT_GT(id, last_backward);
  EXPECT_GT(mtp_wgrads, 0);
  EXPECT_EQ(drained_mtp, 0);
  const TrainingPlan plan = resolve_training_plan(s);
  const double hidden = 4096, vocab = 128256, tokens = 1024;
  double kept = 0;
  for (const MemoryItem& item : memory_ledger(plan, 1).static_items) {
    if (item.name == "deferred lm_head wgrad inputs") kept = item.bytes;
  }
  EXPECT_DOUBLE_EQ(kept, 3 * 2 * 2 * (tokens * hidden + tokens * vocab));
  // A limit below one micro-batch's calls still defers the first micro-batch, so that the
  // drain declares the head's gradients ready.
  s.mutable_training()->set_wgrad_deferral_limit(1);
  const auto one = build_training_step(resolve_training_plan(s));
  int drained = 0;
  for (OpId id = 0; id < one.graph.ops().size(); ++id) {
    const std::string& label = one.graph.label(one.graph.op(id).label);
    drained += one.graph.op(id).rank == 1 && label == "lm_head.wgrad" ? 1 : 0;
  }
  EXPECT_EQ(drained, 1);
}

}  // namespace
}  // namespace racksim
