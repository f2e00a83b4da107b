// Transformer Engine's TP communication overlap (training.tp_comm_overlap): the graph cuts the
// GEMMs beside TP collectives into the pieces TE runs and conserves their work; the SMs the
// overlapped reduce-scatters hold slow the GEMM beside them (the simulated steps:
// tests/cli/cli_tp_overlap_test.cpp).
#include <gtest/gtest.h>

#include <string>

#include "sim/compute_model.h"
#include "topologies/hardware_presets.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

// Two layers of Llama 3 70B on one DGX H100 at TP4 x DP2 with sequence parallelism.
config::Scenario tp4_scenario(bool overlap) {
  config::Scenario s;
  s.set_name("tp overlap");
  *s.mutable_model() = *model_preset("llama3-70b");
  s.mutable_model()->set_num_layers(2);
  s.mutable_model()->set_vocab_size(1024);
  *s.mutable_hardware() = *topo::hardware_preset("dgx-h100");
  s.mutable_hardware()->set_nodes(1);
  auto* l = s.mutable_layout();
  l->set_tp(4);
  l->set_cp(1);
  l->set_pp(1);
  l->set_dp(2);
  l->set_sequence_parallel(true);
  auto* t = s.mutable_training();
  t->set_global_batch_size(2);
  t->set_micro_batch_size(1);
  t->set_seq_length(8192);
  t->set_recompute(config::Training::NONE);
  t->set_dtype(config::BF16);
  t->set_grad_reduce_dtype(config::FP32);
  t->set_tp_comm_overlap(overlap);
  t->set_tp_comm_overlap_sms(16);
  s.mutable_sim()->set_fidelity(config::Simulation::FULL);
  return s;
}

struct LabelCount {
  int ops = 0;
  double flops = 0;
  double bytes = 0;
};

// Rank 0's forward of layer 0: the operations labelled `label` of one kind.
LabelCount forward_ops(const TrainingStep& step, const std::string& label, OpKind kind) {
  LabelCount c;
  for (OpId id = 0; id < step.graph.size(); ++id) {
    const Op& op = step.graph.op(id);
    if (op.rank != 0 || op.layer != 0 || op.phase != Phase::kForward || op.kind != kind) continue;
    if (step.graph.label(op.label) != label) continue;
    ++c.ops;
    (kind == OpKind::kCompute ? c.flops : c.bytes) += op.amount;
  }
  return c;
}

TEST(TpCommOverlap, CutsTheGemmsAsTransformerEngineDoesAndConservesTheirWork) {
  const TrainingStep plain = build_training_step(resolve_training_plan(tp4_scenario(false)));
  const TrainingStep overlapped = build_training_step(resolve_training_plan(tp4_scenario(true)));
  // Ring exchange: qkv in tp = 4 slices, a shard from the TP neighbour before each but the first.
  const LabelCount qkv = forward_ops(overlapped, "attn.qkv", OpKind::kCompute);
  EXPECT_EQ(qkv.ops, 4);
  EXPECT_DOUBLE_EQ(qkv.flops, forward_ops(plain, "attn.qkv", OpKind::kCompute).flops);
  const LabelCount shards = forward_ops(overlapped, "attn.qkv.ag_send", OpKind::kSend);
  EXPECT_EQ(shards.ops, 3);
  const double gathered = forward_ops(plain, "attn.in", OpKind::kCollective).bytes;
  EXPECT_DOUBLE_EQ(shards.bytes, gathered * 3 / 4);  // three of the four shards travel
  EXPECT_EQ(forward_ops(overlapped, "attn.in", OpKind::kCollective).ops, 0);
  // Pipeline: proj in 4 chunks, each followed by a reduce-scatter of its quarter, the GEMM
  // chunks on the SMs the reduce-scatters leave.
  const LabelCount proj = forward_ops(overlapped, "attn.proj", OpKind::kCompute);
  EXPECT_EQ(proj.ops, 4);
  EXPECT_DOUBLE_EQ(proj.flops, forward_ops(plain, "attn.proj", OpKind::kCompute).flops);
  const LabelCount scatters = forward_ops(overlapped, "attn.out", OpKind::kCollective);
  EXPECT_EQ(scatters.ops, 4);
  EXPECT_DOUBLE_EQ(scatters.bytes, forward_ops(plain, "attn.out", OpKind::kCollective).bytes);
  for (OpId id = 0; id < overlapped.graph.size(); ++id) {
    const Op& op = overlapped.graph.op(id);
    if (op.rank == 0 && op.kind == OpKind::kCompute &&
        overlapped.graph.label(op.label) == "attn.proj") {
      EXPECT_EQ(overlapped.graph.shape(op.shape).reserved_sms, 16);
    }
  }
}

TEST(TpCommOverlap, ReservedSmsSlowTheGemmByTheirShare) {
  const auto model = sim::ComputeModel::from_hardware(*topo::hardware_preset("dgx-h100"));
  Op op;
  op.kind = OpKind::kCompute;
  op.op_class = OpClass::kGemm;
  KernelShape shape{8192, 8192, 8192};
  op.amount = shape.flops();
  const double whole = model.duration_s(op, shape);
  shape.reserved_sms = 33;  // a quarter of 132
  const double three_quarters = model.duration_s(op, shape);
  EXPECT_GT(three_quarters, whole * 4 / 3 * 0.97);
  EXPECT_LT(three_quarters, whole * 4 / 3 * 1.1);
}

}  // namespace
}  // namespace racksim
