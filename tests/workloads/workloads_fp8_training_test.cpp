// FP8 training as Transformer Engine runs it, without simulation: which kernels run in FP8, the
// casts and amax passes before them, the amax reductions of gathered operands, the weights' FP8
// copies in the memory ledger, FP8 parameters, and the BF16 hidden state between stages.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>

#include "tests/support/training_scenario.h"
#include "workloads/training/memory_ledger.h"
#include "workloads/training/step_shape.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

using testing::scenario;

// FP8 training as Transformer Engine runs it: the linear layers' GEMMs in FP8, each after a
// cast kernel (BF16 in, FP8 and its transpose out: 4 B per element; the transpose alone where
// the norm wrote FP8), everything else in BF16, including the output layer's GEMM.
TEST(TrainingStep, Fp8RunsOnlyTheLinearLayersInFp8AfterTheirCasts) {
  auto s = scenario(2, 2, 1, config::Training::ONE_F_ONE_B);
  s.mutable_training()->set_dtype(config::FP8);
  const auto step = build_training_step(resolve_training_plan(s));
  const EventGraph& g = step.graph;
  std::set<std::pair<OpClass, DataType>> seen;
  std::map<std::pair<std::string, int>, const Op*> rank0;  // (label, micro-batch), forward passes
  for (const Op& op : g.ops()) {
    if (op.kind != OpKind::kCompute) continue;
    seen.insert({op.op_class, op.dtype});
    if (g.label(op.label) == "lm_head") {
      EXPECT_EQ(op.dtype, DataType::kBf16);
    }
    if (op.rank == 0 && op.phase != Phase::kRecompute)
      rank0[{g.label(op.label), op.micro_batch}] = &op;
  }
  EXPECT_TRUE(seen.contains({OpClass::kGemm, DataType::kFp8}));
  EXPECT_TRUE(seen.contains({OpClass::kAttention, DataType::kBf16}));
  EXPECT_FALSE(seen.contains({OpClass::kAttention, DataType::kFp8}));
  EXPECT_FALSE(seen.contains({OpClass::kElementwise, DataType::kFp8}));
  const Op* qkv = rank0.at({"attn.qkv", 1});
  ASSERT_EQ(qkv->dtype, DataType::kFp8);
  const KernelShape& x = g.shape(qkv->shape);
  // The input norm already wrote FP8: micro-batch 1 only transposes the input (m x k, 2 B per
  // element); micro-batch 0 casts the weights (k x n) too.
  EXPECT_DOUBLE_EQ(rank0.at({"attn.qkv.fp8_cast", 1})->hbm_bytes, 2.0 * x.m * x.k);
  EXPECT_DOUBLE_EQ(rank0.at({"attn.qkv.fp8_cast", 0})->hbm_bytes,
                   2.0 * x.m * x.k + 4.0 * x.k * x.n);
  // The attention's output is BF16: its projection casts it in full.
  const KernelShape& proj = g.shape(rank0.at({"attn.proj", 1})->shape);
  EXPECT_DOUBLE_EQ(rank0.at({"attn.proj.fp8_cast", 1})->hbm_bytes, 4.0 * proj.m * proj.k);
  // The backward casts the output gradient (m x n) once for both gradient GEMMs.
  EXPECT_DOUBLE_EQ(rank0.at({"attn.qkv.bwd.fp8_cast", 1})->hbm_bytes, 4.0 * x.m * x.n);
  EXPECT_EQ(rank0.at({"attn.qkv.fp8_cast", 1})->dtype, DataType::kBf16);
  // A cast kernel of its own class, which the compute model times at hardware.compute.fp8_cast.
  EXPECT_EQ(rank0.at({"attn.qkv.fp8_cast", 1})->op_class, OpClass::kCast);
  EXPECT_FALSE(rank0.contains({"lm_head.fp8_cast", 1}));
}

// FP8 with current scaling (Transformer Engine's Float8CurrentScaling): a kernel reads each BF16
// tensor for its amax before the cast (2 B per element), and the norm fused with QKV can no
// longer write FP8, so QKV's cast is a whole one (4 B) with the amax from the norm (no pass).
TEST(TrainingStep, Fp8CurrentScalingReadsEachTensorForItsAmaxBeforeTheCast) {
  auto s = scenario(2, 2, 1, config::Training::ONE_F_ONE_B);
  s.mutable_training()->set_dtype(config::FP8);
  s.mutable_training()->set_fp8_scaling(config::Training::CURRENT);
  const auto step = build_training_step(resolve_training_plan(s));
  const EventGraph& g = step.graph;
  std::map<std::pair<std::string, int>, const Op*> rank0;
  for (const Op& op : g.ops()) {
    if (op.kind == OpKind::kCompute && op.rank == 0 && op.phase != Phase::kRecompute)
      rank0[{g.label(op.label), op.micro_batch}] = &op;
  }
  const KernelShape& x = g.shape(rank0.at({"attn.qkv", 1})->shape);
  EXPECT_DOUBLE_EQ(rank0.at({"attn.qkv.fp8_cast", 1})->hbm_bytes, 4.0 * x.m * x.k);
  EXPECT_FALSE(rank0.contains({"attn.qkv.fp8_amax", 1}));
  // Micro-batch 0 also casts the weights, after their amax pass.
  EXPECT_DOUBLE_EQ(rank0.at({"attn.qkv.fp8_amax", 0})->hbm_bytes, 2.0 * x.k * x.n);
  const KernelShape& proj = g.shape(rank0.at({"attn.proj", 1})->shape);
  EXPECT_DOUBLE_EQ(rank0.at({"attn.proj.fp8_amax", 1})->hbm_bytes, 2.0 * proj.m * proj.k);
  EXPECT_DOUBLE_EQ(rank0.at({"attn.proj.fp8_cast", 1})->hbm_bytes, 4.0 * proj.m * proj.k);
  EXPECT_DOUBLE_EQ(rank0.at({"attn.qkv.bwd.fp8_amax", 1})->hbm_bytes, 2.0 * x.m * x.n);
  // The MLP's up projection takes its output gradient from the activation's backward, which
  // finds the amax as it writes it: no pass; the down projection's gradient needs one.
  EXPECT_FALSE(rank0.contains({"mlp.up.bwd.fp8_amax", 1}));
  EXPECT_TRUE(rank0.contains({"mlp.down.bwd.fp8_amax", 1}));
  EXPECT_EQ(rank0.at({"attn.proj.fp8_amax", 1})->dtype, DataType::kBf16);
  // The cast waits for its amax.
  const Op* cast = rank0.at({"attn.proj.fp8_cast", 1});
  const Op* amax = rank0.at({"attn.proj.fp8_amax", 1});
  const auto deps = g.deps(static_cast<OpId>(cast - g.ops().data()));
  const auto amax_id = static_cast<OpId>(amax - g.ops().data());
  EXPECT_NE(std::find(deps.begin(), deps.end(), amax_id), deps.end());
}

// Under sequence parallelism Transformer Engine all-gathers the FP8 input of qkv and fc1 and the
// FP8 output gradient of proj and fc2; with current scaling the TP ranks first agree one amax (a
// one-scalar all-reduce over the TP group per gathered operand). Delayed scaling needs none.
TEST(TrainingStep, Fp8CurrentScalingReducesTheAmaxOfGatheredOperandsOverTp) {
  auto s = scenario(2, 2, 1, config::Training::ONE_F_ONE_B);
  s.mutable_training()->set_dtype(config::FP8);
  s.mutable_layout()->set_sequence_parallel(true);
  auto reductions = [&](config::Training::Fp8Scaling scaling) {
    s.mutable_training()->set_fp8_scaling(scaling);
    const auto step = build_training_step(resolve_training_plan(s));
    std::multiset<std::string> labels;  // rank 0, micro-batch 1, layer 0
    for (const Op& op : step.graph.ops()) {
      const std::string& label = step.graph.label(op.label);
      if (op.kind == OpKind::kCollective && op.rank == 0 && op.micro_batch == 1 && op.layer == 0 &&
          label.ends_with(".fp8_amax_allreduce")) {
        EXPECT_DOUBLE_EQ(op.amount, 4.0) << label;  // bytes: one FP32 scalar
        labels.insert(label);
      }
    }
    return labels;
  };
  EXPECT_EQ(reductions(config::Training::CURRENT),
            (std::multiset<std::string>{"attn.qkv.fp8_amax_allreduce", "mlp.up.fp8_amax_allreduce",
                                        "attn.proj.bwd.fp8_amax_allreduce",
                                        "mlp.down.bwd.fp8_amax_allreduce"}));
  EXPECT_TRUE(reductions(config::Training::DELAYED).empty());
}

// FP8 training keeps BF16 weights and, for the step, their FP8 copy and its transpose: 4 B per
// parameter where BF16 training holds 2.
TEST(MemoryLedger, Fp8TrainingHoldsBf16WeightsAndTheirFp8Copies) {
  auto s = scenario(2, 2, 1, config::Training::ONE_F_ONE_B);
  const TrainingPlan bf16 = resolve_training_plan(s);
  s.mutable_training()->set_dtype(config::FP8);
  const TrainingPlan fp8 = resolve_training_plan(s);
  for (const int stage : {0, 1}) {  // the embedding's and the output layer's (untied)
    const RankId rank = fp8.layout.rank(RankCoords{0, 0, 0, stage});
    const double params = params_on_rank(fp8.model, fp8.layout, fp8.map, rank);
    const double tables = rank_table_params(fp8.model, fp8.layout, fp8.map, rank);
    EXPECT_DOUBLE_EQ(tables, fp8.model.embedding_params() / 2);  // split over TP 2
    const MemoryLedger ledger = memory_ledger(fp8, rank);
    EXPECT_DOUBLE_EQ(memory_ledger(bf16, rank).static_items.at(0).bytes, 2 * params);
    EXPECT_DOUBLE_EQ(ledger.static_items.at(0).bytes, 2 * params);
    // Transformer Engine's FP8 copy and transpose: the blocks' GEMM weights, not the tables.
    EXPECT_EQ(ledger.static_items.at(1).name, "FP8 weight copies");
    EXPECT_DOUBLE_EQ(ledger.static_items.at(1).bytes, 2 * (params - tables));
  }
}

// FP8 parameters (training.fp8_param_gather): the GEMMs' weights at 1 B with their 1 B transpose
// and no BF16 copy, the tables in BF16; the parameter all-gather of the distributed optimizer at
// one byte a parameter; no weight cast in the forward, only the transpose in the first micro-batch.
TEST(MemoryLedger, Fp8ParametersHoldOneByteAndATranspose) {
  auto s = scenario(2, 2, 2, config::Training::ONE_F_ONE_B);
  s.mutable_training()->set_dtype(config::FP8);
  s.mutable_training()->set_zero_stage(1);
  const TrainingPlan copies = resolve_training_plan(s);
  s.mutable_training()->set_fp8_param_gather(true);
  const TrainingPlan fp8_params = resolve_training_plan(s);
  const RankId rank = fp8_params.layout.rank(RankCoords{0, 0, 0, 1});  // the output layer's stage
  const double params = params_on_rank(fp8_params.model, fp8_params.layout, fp8_params.map, rank);
  const double tables =
      rank_table_params(fp8_params.model, fp8_params.layout, fp8_params.map, rank);
  const MemoryLedger ledger = memory_ledger(fp8_params, rank);
  EXPECT_DOUBLE_EQ(ledger.static_items.at(0).bytes, (params - tables) + 2 * tables);
  EXPECT_EQ(ledger.static_items.at(1).name, "FP8 weight transposes");
  EXPECT_DOUBLE_EQ(ledger.static_items.at(1).bytes, params - tables);
  const MemoryLedger before = memory_ledger(copies, rank);
  EXPECT_DOUBLE_EQ(before.static_bytes() - ledger.static_bytes(), 2 * (params - tables));

  auto op_bytes = [&](const TrainingPlan& plan, const std::string& suffix) {
    const TrainingStep step = build_training_step(plan);
    double bytes = 0;
    for (const Op& op : step.graph.ops()) {
      const std::string label(step.graph.label(op.label));
      if (op.rank == rank && label.size() >= suffix.size() &&
          label.compare(label.size() - suffix.size(), suffix.size(), suffix) == 0) {
        bytes += op.kind == OpKind::kCollective ? op.amount : op.hbm_bytes;
      }
    }
    return bytes;
  };
  // The distributed optimizer's gather: the GEMMs' weights at 1 B instead of BF16's 2 B, the
  // vocabulary tables at 2 B either way.
  EXPECT_DOUBLE_EQ(op_bytes(copies, "params.allgather"), 2 * params);
  EXPECT_DOUBLE_EQ(op_bytes(fp8_params, "params.allgather"), (params - tables) + 2 * tables);
  // Casts: the inputs' as before, the weights' 4 B an element become a 2 B transpose.
  EXPECT_LT(op_bytes(fp8_params, ".fp8_cast"), op_bytes(copies, ".fp8_cast"));
}

// FP8 training runs only its GEMMs in FP8: the hidden state a pipeline stage sends on is BF16, as
// under BF16 training (it was counted at one byte before 7 December).
TEST(TrainingStep, Fp8PipelineSendsCarryTheBf16HiddenState) {
  auto s = scenario(2, 2, 1, config::Training::ONE_F_ONE_B);
  auto sent = [](const TrainingPlan& plan) {
    const TrainingStep step = build_training_step(plan);
    double bytes = 0;
    for (const Op& op : step.graph.ops()) {
      if (op.rank == 0 && op.kind == OpKind::kSend) bytes += op.amount;
    }
    return bytes;
  };
  const double bf16 = sent(resolve_training_plan(s));
  s.mutable_training()->set_dtype(config::FP8);
  EXPECT_GT(bf16, 0);
  EXPECT_DOUBLE_EQ(sent(resolve_training_plan(s)), bf16);
}

}  // namespace
}  // namespace racksim
