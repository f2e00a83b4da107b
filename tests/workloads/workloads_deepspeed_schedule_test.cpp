// DeepSpeed's TrainSchedule as a stage's instructions (deepspeed_schedule.h) and the graph a
// DEEPSPEED exchange writes: each transfer waits for both sides.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "graph/graph_check.h"
#include "tests/support/training_scenario.h"
#include "workloads/training/deepspeed_schedule.h"
#include "workloads/training/training_plan.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

using T = PipelineTransfer;

PassOrder passes_of(const std::vector<PipelineInstruction>& instructions) {
  PassOrder passes;
  for (const auto& i : instructions) {
    if (i.is_pass) passes.push_back(i.pass);
  }
  return passes;
}

TEST(DeepSpeedSchedule, RunsTheSamePassesAs1F1B) {
  for (const auto& [p, m] :
       std::vector<std::pair<int, int>>{{1, 4}, {2, 3}, {4, 2}, {4, 8}, {8, 24}}) {
    for (int s = 0; s < p; ++s) {
      const PassOrder ds = passes_of(deepspeed_instructions(s, p, m));
      const PassOrder one_f_one_b = one_f_one_b_order(s, p, m);
      ASSERT_EQ(ds.size(), one_f_one_b.size()) << "p=" << p << " m=" << m << " s=" << s;
      for (size_t i = 0; i < ds.size(); ++i) {
        EXPECT_EQ(ds[i].kind, one_f_one_b[i].kind) << "p=" << p << " m=" << m << " s=" << s;
        EXPECT_EQ(ds[i].micro_batch, one_f_one_b[i].micro_batch);
      }
    }
  }
}

// Stage 1 of 4 over 3 micro-batches, step by step from TrainSchedule's parity rule: the
// activation of a forward leaves after the next step's gradient has arrived, and the transfers
// are never paired.
TEST(DeepSpeedSchedule, DefersEachForwardsSendToTheNextStep) {
  auto pass = [](PassKind k, int mb) { return PipelineInstruction{true, {k, mb, 0, false}}; };
  auto move = [](T t, int mb) { return PipelineInstruction{false, {}, t, mb}; };
  const auto F = PassKind::kForward;
  const auto B = PassKind::kBackward;
  const std::vector<PipelineInstruction> expected{
      move(T::kRecvActivation, 0), pass(F, 0), move(T::kSendActivation, 0),
      move(T::kRecvActivation, 1), pass(F, 1), move(T::kSendActivation, 1),
      move(T::kRecvActivation, 2), pass(F, 2), move(T::kRecvGradient, 0),
      move(T::kSendActivation, 2), pass(B, 0), move(T::kSendGradient, 0),
      move(T::kRecvGradient, 1),   pass(B, 1), move(T::kSendGradient, 1),
      move(T::kRecvGradient, 2),   pass(B, 2), move(T::kSendGradient, 2)};
  EXPECT_EQ(deepspeed_instructions(1, 4, 3), expected);
}

// Every micro-batch's activation enters every stage but the first and leaves every stage but the
// last, once; its gradient the other way; a transfer comes after the pass that makes it and
// before the pass that needs it.
TEST(DeepSpeedSchedule, MovesEachTransferOnceBetweenItsPasses) {
  const int p = 4, m = 6;
  for (int s = 0; s < p; ++s) {
    std::map<std::pair<T, int>, size_t> at;
    std::map<std::pair<PassKind, int>, size_t> pass_at;
    const auto instructions = deepspeed_instructions(s, p, m);
    for (size_t i = 0; i < instructions.size(); ++i) {
      const auto& in = instructions[i];
      if (in.is_pass) {
        pass_at[{in.pass.kind, in.pass.micro_batch}] = i;
      } else {
        EXPECT_TRUE(at.emplace(std::pair{in.transfer, in.micro_batch}, i).second);
      }
    }
    const size_t per_kind = static_cast<size_t>(m);
    EXPECT_EQ(at.size(), (s > 0 ? 2 * per_kind : 0) + (s + 1 < p ? 2 * per_kind : 0));
    for (int mb = 0; mb < m; ++mb) {
      const size_t f = pass_at.at({PassKind::kForward, mb});
      const size_t b = pass_at.at({PassKind::kBackward, mb});
      if (s > 0) {
        EXPECT_LT(at.at({T::kRecvActivation, mb}), f);
        EXPECT_GT(at.at({T::kSendGradient, mb}), b);
      }
      if (s + 1 < p) {
        EXPECT_GT(at.at({T::kSendActivation, mb}), f);
        EXPECT_LT(at.at({T::kRecvGradient, mb}), b);
      }
    }
  }
  EXPECT_THROW(deepspeed_instructions(4, 4, 2), std::invalid_argument);
  EXPECT_THROW(deepspeed_instructions(0, 4, 0), std::invalid_argument);
}

// In the graph: every pipeline data send waits for a message of no bytes from its receiver, sent
// once the receiver has reached the transfer; the sends and their receives still match.
TEST(DeepSpeedSchedule, EachDataSendWaitsForItsReceiversReadyMessage) {
  auto s = testing::scenario(1, 4, 2, config::Training::ONE_F_ONE_B);
  s.mutable_layout()->set_virtual_stages(1);
  s.mutable_training()->set_pipeline_exchange(config::Training::DEEPSPEED);
  const TrainingStep step = build_training_step(resolve_training_plan(s));
  EXPECT_NO_THROW(match_sends_to_recvs(step.graph));
  int data_sends = 0;
  for (OpId id = 0; id < step.graph.size(); ++id) {
    const Op& op = step.graph.op(id);
    if (op.kind != OpKind::kSend || op.dim != CommDim::kPp || op.amount == 0) continue;
    ++data_sends;
    bool waits_for_ready = false;
    for (OpId d : step.graph.deps(id)) {
      const Op& dep = step.graph.op(d);
      waits_for_ready |= dep.kind == OpKind::kRecv && dep.amount == 0 && dep.peer == op.peer;
    }
    EXPECT_TRUE(waits_for_ready) << step.graph.label(op.label) << " of rank " << op.rank;
  }
  // An activation and a gradient per micro-batch (8) between each of the 3 pairs of neighbouring
  // stages, in each of the 2 data-parallel replicas.
  EXPECT_EQ(data_sends, 2 * 8 * 3 * 2);
}

}  // namespace
}  // namespace racksim
