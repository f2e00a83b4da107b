// FP8 parameters (training.fp8_param_gather): the optimizer casts its FP32 shard of the GEMMs'
// weights to FP8 instead of writing a BF16 copy (Transformer Engine's
// cast_master_weights_to_fp8); under current scaling an amax pass over the shard and a MAX
// all-reduce of the amaxes over the data-parallel group come first. The vocabulary tables stay
// BF16 and keep their copy.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/support/training_scenario.h"
#include "workloads/training/step_shape.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

using testing::scenario;

// Per label on rank 0: HBM bytes of its kernels, or the number of its collectives.
std::map<std::string, double> optimizer_ops(config::Training::Fp8Scaling scaling) {
  auto s = scenario(1, 2, 2, config::Training::INTERLEAVED_1F1B);
  auto* t = s.mutable_training();
  t->set_zero_stage(1);
  t->set_dtype(config::FP8);
  t->set_fp8_param_gather(true);
  t->set_fp8_scaling(scaling);
  const TrainingPlan plan = resolve_training_plan(s);
  const TrainingStep step = build_training_step(plan);
  std::map<std::string, double> ops;
  for (const Op& op : step.graph.ops()) {
    const std::string label(step.graph.label(op.label));
    if (op.rank != 0 || op.phase != Phase::kOptimizer) continue;
    ops[label] += op.kind == OpKind::kCollective ? 1 : op.hbm_bytes;
  }
  const double params = params_on_rank(plan.model, plan.layout, plan.map, 0) / 2;  // ZeRO-1, DP2
  const double gemm = params - rank_table_params(plan.model, plan.layout, plan.map, 0) / 2;
  ops["params"] = params;
  ops["gemm"] = gemm;
  return ops;
}

TEST(Fp8Parameters, CurrentScalingCastsTheShardAfterAnAmaxPass) {
  auto ops = optimizer_ops(config::Training::CURRENT);
  const double params = ops["params"], gemm = ops["gemm"];
  ASSERT_GT(gemm, 0);
  ASSERT_LT(gemm, params);  // rank 0 holds the embedding table
  EXPECT_DOUBLE_EQ(ops["optimizer.adam"], 30 * params - 2 * gemm);
  EXPECT_DOUBLE_EQ(ops["optimizer.fp8_param_amax"], 4 * gemm);
  EXPECT_DOUBLE_EQ(ops["optimizer.fp8_param_amax.allreduce"], 1);
  EXPECT_DOUBLE_EQ(ops["optimizer.fp8_param_cast"], 5 * gemm);
}

TEST(Fp8Parameters, DelayedScalingCastsWithTheScaleItHas) {
  auto ops = optimizer_ops(config::Training::DELAYED);
  EXPECT_EQ(ops.count("optimizer.fp8_param_amax"), 0u);
  EXPECT_EQ(ops.count("optimizer.fp8_param_amax.allreduce"), 0u);
  EXPECT_DOUBLE_EQ(ops["optimizer.fp8_param_cast"], 5 * ops["gemm"]);
}

}  // namespace
}  // namespace racksim
