// Megatron-Core's data-parallel buckets (training.bucket_first_chunk_only): only the first
// pipeline stage's first model chunk is split into buckets; every other chunk reduces its
// gradients, and gathers its updated parameters, as one bucket (Megatron-Core's
// DistributedDataParallel turns bucketing off after pp rank 0 and for model chunks after the
// first; the interleaved schedule issues those chunks' gathers through param_sync_func).
#include <gtest/gtest.h>

#include <map>

#include "tests/support/training_scenario.h"
#include "workloads/training/step_shape.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

using testing::scenario;

// Two stages of two chunks (two layers each), ZeRO-1 with overlapped reduction, a bucket of one
// parameter so that a bucketed chunk sends every block's gradients on their own.
config::Scenario sharded(config::Training::Schedule schedule, int virtual_stages) {
  auto s = scenario(1, 2, 2, schedule);
  s.mutable_layout()->set_virtual_stages(virtual_stages);
  auto* t = s.mutable_training();
  t->set_zero_stage(1);
  t->set_overlap_grad_reduce(true);
  t->set_grad_bucket_elements(1);
  return s;
}

// The same with Megatron-Core's buckets and the optimizer's gather under the next forward.
config::Scenario gathered_whole(config::Training::Schedule schedule, int virtual_stages) {
  auto s = sharded(schedule, virtual_stages);
  s.mutable_training()->set_overlap_param_gather(true);
  s.mutable_training()->set_bucket_first_chunk_only(true);
  return s;
}

struct Collectives {
  std::map<int, int> count;     // per pipeline stage, on its first rank
  std::map<int, double> bytes;  // the same
  std::map<int, std::vector<OpId>> ids;
};

Collectives collectives(const TrainingPlan& plan, const TrainingStep& step, const char* name) {
  Collectives c;
  for (OpId id = 0; id < step.graph.ops().size(); ++id) {
    const Op& op = step.graph.ops()[id];
    const RankCoords coords = plan.layout.coords(op.rank);
    if (coords.dp != 0 || step.graph.label(op.label) != name) continue;
    ++c.count[coords.pp];
    c.bytes[coords.pp] += op.amount;
    c.ids[coords.pp].push_back(id);
  }
  return c;
}

double params_of_stage(const TrainingPlan& plan, int stage) {
  RankCoords coords{};
  coords.pp = stage;
  return params_on_rank(plan.model, plan.layout, plan.map, plan.layout.rank(coords));
}

// Stage 0: chunk 0 bucketed (two layers and the embedding: three reductions), chunk 1 whole
// (one). Stage 1: one per chunk. Every stage still reduces all of its gradients once.
TEST(MegatronBuckets, OnlyTheFirstStagesFirstChunkIsBucketed) {
  auto s = sharded(config::Training::INTERLEAVED_1F1B, 2);
  const TrainingPlan every_chunk = resolve_training_plan(s);
  const Collectives before =
      collectives(every_chunk, build_training_step(every_chunk), "grad.reducescatter");
  s.mutable_training()->set_bucket_first_chunk_only(true);
  const TrainingPlan plan = resolve_training_plan(s);
  const Collectives after = collectives(plan, build_training_step(plan), "grad.reducescatter");
  EXPECT_EQ(before.count.at(0), 5);
  EXPECT_EQ(before.count.at(1), 5);
  EXPECT_EQ(after.count.at(0), 4);
  EXPECT_EQ(after.count.at(1), 2);
  for (int stage : {0, 1}) {
    EXPECT_DOUBLE_EQ(after.bytes.at(stage), before.bytes.at(stage));
    EXPECT_DOUBLE_EQ(after.bytes.at(stage), 4 * params_of_stage(plan, stage));  // FP32 gradients
  }
}

// With overlap_param_gather, a later stage's chunks are gathered whole, and under the
// interleaved schedule chunks 0 and 1 as the step starts: nothing precedes them.
TEST(MegatronBuckets, InterleavedChunksAreGatheredWholeAtTheStart) {
  const TrainingPlan plan =
      resolve_training_plan(gathered_whole(config::Training::INTERLEAVED_1F1B, 2));
  const TrainingStep step = build_training_step(plan);
  const Collectives gathers = collectives(plan, step, "params.allgather");
  ASSERT_EQ(gathers.count.at(1), 2);
  EXPECT_DOUBLE_EQ(gathers.bytes.at(1), 2 * params_of_stage(plan, 1));  // BF16
  for (OpId id : gathers.ids.at(1)) EXPECT_TRUE(step.graph.deps(id).empty());
  // Stage 0: the first chunk layer by layer (embedding and two layers), all issued at the
  // start, and its second chunk whole.
  EXPECT_EQ(gathers.count.at(0), 4);
  for (OpId id : gathers.ids.at(0)) EXPECT_TRUE(step.graph.deps(id).empty());
}

// Without virtual stages the forward's first hook issues the later stage's gather, after the
// activation it receives.
TEST(MegatronBuckets, WithoutVirtualStagesTheGatherFollowsTheFirstReceive) {
  const TrainingPlan plan = resolve_training_plan(gathered_whole(config::Training::ONE_F_ONE_B, 1));
  const TrainingStep step = build_training_step(plan);
  const Collectives gathers = collectives(plan, step, "params.allgather");
  ASSERT_EQ(gathers.count.at(1), 1);
  const auto deps = step.graph.deps(gathers.ids.at(1).front());
  ASSERT_EQ(deps.size(), 1u);
  EXPECT_EQ(step.graph.label(step.graph.ops()[deps.front()].label), "recv.activation");
}

// align_grad_reduce under the interleaved schedule: no reduction during a backward; each chunk's
// is launched whole after the backward pass pipeline-rank passes after its last. Stage 0 launches
// both chunks' right after their last backward passes; stage 1 launches the chunk that finishes
// first one backward pass later and the one that finishes last (chunk 0) after the schedule.
TEST(MegatronBuckets, AlignedReductionsFollowThePipelineRank) {
  auto s = sharded(config::Training::INTERLEAVED_1F1B, 2);
  s.mutable_training()->set_bucket_first_chunk_only(true);
  s.mutable_training()->set_align_grad_reduce(true);
  const TrainingPlan plan = resolve_training_plan(s);
  const TrainingStep step = build_training_step(plan);
  const Collectives reductions = collectives(plan, step, "grad.reducescatter");
  std::map<int, std::vector<Phase>> phases;
  for (const auto& [stage, ids] : reductions.ids) {
    for (OpId id : ids) phases[stage].push_back(step.graph.ops()[id].phase);
  }
  EXPECT_EQ(phases.at(0), (std::vector<Phase>{Phase::kBackward, Phase::kBackward}));
  EXPECT_EQ(phases.at(1), (std::vector<Phase>{Phase::kBackward, Phase::kOptimizer}));
  for (int stage : {0, 1}) {
    EXPECT_DOUBLE_EQ(reductions.bytes.at(stage), 4 * params_of_stage(plan, stage));
  }
}

// FP8 parameters gather the GEMMs' weights at one byte and the vocabulary tables, which stay
// BF16, at two.
TEST(MegatronBuckets, Fp8ParametersGatherTheTablesInBf16) {
  auto s = sharded(config::Training::INTERLEAVED_1F1B, 2);
  s.mutable_training()->set_dtype(config::FP8);
  s.mutable_training()->set_fp8_param_gather(true);
  const TrainingPlan plan = resolve_training_plan(s);
  const Collectives gathers = collectives(plan, build_training_step(plan), "params.allgather");
  const double tables = rank_table_params(plan.model, plan.layout, plan.map, 0);
  ASSERT_GT(tables, 0);
  EXPECT_DOUBLE_EQ(gathers.bytes.at(0), params_of_stage(plan, 0) + tables);
}

}  // namespace
}  // namespace racksim
