// Megatron-Core's combined 1F1B (training.moe_a2a_overlap) as pass orders: one more warm-up
// forward than the plain schedule, then each steady-state forward paired with a backward of
// another micro-batch (megatron/core/pipeline_parallel/schedules.py and combined_1f1b.py).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "workloads/training/memory_ledger.h"
#include "workloads/training/pipeline_schedule.h"

namespace racksim {
namespace {

// The forwards a stage runs before its first backward or its first pair: its warm-up.
int warmup_forwards(const PassOrder& order) {
  int n = 0;
  while (n < static_cast<int>(order.size()) && order[n].kind == PassKind::kForward &&
         !order[n].overlaps_next) {
    ++n;
  }
  return n;
}

// Each (micro-batch, chunk) runs one forward and, later, one backward; each pair is a forward
// followed by a backward of a different micro-batch.
void expect_valid_combined(const PassOrder& order, int micro_batches, int chunks) {
  std::map<std::pair<int, int>, int> seen;  // 1 after the forward, 2 after the backward
  for (size_t i = 0; i < order.size(); ++i) {
    const PipelinePass& p = order[i];
    int& state = seen[{p.micro_batch, p.local_chunk}];
    EXPECT_EQ(state, p.kind == PassKind::kForward ? 0 : 1) << "pass " << i;
    state = p.kind == PassKind::kForward ? 1 : 2;
    if (!p.overlaps_next) continue;
    ASSERT_LT(i + 1, order.size());
    EXPECT_EQ(p.kind, PassKind::kForward);
    EXPECT_EQ(order[i + 1].kind, PassKind::kBackward);
    EXPECT_NE(order[i + 1].micro_batch, p.micro_batch) << "pass " << i;
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(micro_batches * chunks));
  for (const auto& [key, state] : seen) EXPECT_EQ(state, 2);
}

TEST(Combined1F1B, InterleavedOrdersWarmUpOneMoreAndPairEverySteadyForward) {
  for (int p : {2, 3, 4}) {
    for (int v : {2, 3}) {
      for (int m : {p, 2 * p, 4 * p}) {
        for (int s = 0; s < p; ++s) {
          const PassOrder plain = interleaved_order(s, p, v, m);
          const PassOrder combined = combined_1f1b_order(plain);
          SCOPED_TRACE(::testing::Message() << "p " << p << " v " << v << " m " << m << " s " << s);
          expect_valid_combined(combined, m, v);
          const int total = m * v;
          const int warmup = m == p ? total : std::min(2 * (p - s - 1) + (v - 1) * p, total);
          const int combined_warmup = std::min(warmup + 1, total);
          EXPECT_EQ(warmup_forwards(combined), combined_warmup);
          int pairs = 0;
          for (const PipelinePass& pass : combined) pairs += pass.overlaps_next;
          EXPECT_EQ(pairs, total - combined_warmup);
        }
      }
    }
  }
}

// Megatron-Core's own example (p 4, v 2, 8 micro-batches): stage 0 warms up with 11 forwards
// where the plain interleaved schedule runs 10.
TEST(Combined1F1B, StageZeroOfFourWithTwoChunksWarmsUpWithElevenForwards) {
  // The plain order's leading forwards are its warm-up and its first steady-state forward.
  EXPECT_EQ(warmup_forwards(interleaved_order(0, 4, 2, 8)) - 1, 10);
  EXPECT_EQ(warmup_forwards(combined_1f1b_order(interleaved_order(0, 4, 2, 8))), 11);
}

// Without pipeline stages: F0, then F(i+1) with B(i), then B(m-1).
TEST(Combined1F1B, OneStageRunsEachForwardBesideThePreviousBackward) {
  const PassOrder order = combined_1f1b_order(one_f_one_b_order(0, 1, 4));
  const PassOrder expected = {
      {PassKind::kForward, 0, 0, false},  {PassKind::kForward, 1, 0, true},
      {PassKind::kBackward, 0, 0, false}, {PassKind::kForward, 2, 0, true},
      {PassKind::kBackward, 1, 0, false}, {PassKind::kForward, 3, 0, true},
      {PassKind::kBackward, 2, 0, false}, {PassKind::kBackward, 3, 0, false}};
  EXPECT_EQ(order, expected);
}

// The extra warm-up forward keeps one more micro-batch's activations (the memory ledger counts
// in-flight passes from the order).
TEST(Combined1F1B, KeepsOneMoreMicroBatchInFlight) {
  for (int s = 0; s < 4; ++s) {
    const PassOrder plain = interleaved_order(s, 4, 2, 16);
    EXPECT_EQ(in_flight_chunk_passes(combined_1f1b_order(plain)), in_flight_chunk_passes(plain) + 1)
        << "stage " << s;
  }
}

TEST(Combined1F1B, RefusesOrdersWithSplitBackwards) {
  EXPECT_THROW(combined_1f1b_order(zb_h1_orders(2, 4).front()), std::invalid_argument);
}

}  // namespace
}  // namespace racksim
