// The steady-state algebra: the periodicity check on micro-batch completions, and the linear
// extension of every additive figure of a step report from two shorter steps.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/steady_state.h"
#include "topologies/hardware_presets.h"
#include "workloads/model/model_presets.h"

namespace racksim {
namespace {

// Rank 0 ends micro-batch i at 1 + 2i, rank 1 at 1.5 + 2i except micro-batch 4 (0.3 s late);
// rank 2 has no operation (a mirrored replica).
struct Completions {
  EventGraph graph{3};
  sim::SimResult result;
  Completions() {
    const StreamId compute = graph.add_stream("compute", StreamKind::kCompute);
    for (RankId rank = 0; rank < 2; ++rank) {
      for (int mb = 0; mb < 6; ++mb) {
        OpContext ctx{rank, compute, Phase::kForward, mb, 0};
        graph.add_recorded_compute(ctx, "pass", 1.0, 0, 0);
        const double end = (rank == 0 ? 1.0 : 1.5) + 2.0 * mb + (rank == 1 && mb == 4 ? 0.3 : 0);
        result.timing.push_back({end - 1, end});
      }
    }
  }
};

TEST(SteadyState, SpacingErrorIsTheWorstRanksRelativeDisagreement) {
  const Completions c;
  EXPECT_DOUBLE_EQ(analysis::micro_batch_spacing_error(c.graph, c.result, 1, 3, 2.0), 0.0);
  // Rank 1 from micro-batch 1 to 4: (9.8 - 3.5) / 3 = 2.1 s against 2 s.
  EXPECT_NEAR(analysis::micro_batch_spacing_error(c.graph, c.result, 1, 4, 2.0), 0.05, 1e-12);
  EXPECT_NEAR(analysis::micro_batch_spacing_error(c.graph, c.result, 1, 3, 2.5), 0.2, 1e-12);
  // A micro-batch a rank never ran: no period can be claimed.
  EXPECT_TRUE(std::isinf(analysis::micro_batch_spacing_error(c.graph, c.result, 1, 7, 2.0)));
}

TrainingPlan plan_of_16_micro_batches() {
  config::Scenario s;
  *s.mutable_model() = *model_preset("llama3-8b");
  *s.mutable_hardware() = *topo::hardware_preset("dgx-h100");
  s.mutable_hardware()->set_nodes(1);
  auto* l = s.mutable_layout();
  l->set_tp(8);
  l->set_pp(1);
  l->set_cp(1);
  l->set_dp(1);
  auto* t = s.mutable_training();
  t->set_global_batch_size(16);
  t->set_micro_batch_size(1);
  t->set_seq_length(4096);
  t->set_schedule(config::Training::ONE_F_ONE_B);
  return resolve_training_plan(s);
}

analysis::StepReport short_step(double step_s, double compute_s, double op_a_s, double op_b_s,
                                double link_bytes, double link_busy_s, uint64_t collectives) {
  analysis::StepReport r;
  r.step_time_s = step_s;
  r.breakdown.step_time_s = step_s;
  r.breakdown.compute_s = compute_s;
  r.breakdown.exposed_comm_s[static_cast<size_t>(CommDim::kTp)] = step_s - compute_s;
  r.critical_path.length_s = step_s;
  r.critical_path.by_kind_s[static_cast<size_t>(analysis::PathKind::kForward)] = step_s;
  r.path_operations.push_back({"a", analysis::PathKind::kForward, CommDim::kOther, op_a_s, 2});
  if (op_b_s > 0) {
    r.path_operations.push_back({"b", analysis::PathKind::kForward, CommDim::kOther, op_b_s, 1});
  }
  analysis::LinkUsage link;
  link.name = "gpu0 -> nvswitch";
  link.bytes = link_bytes;
  link.busy_s = link_busy_s;
  link.capacity_bytes_per_s = 100;
  r.links.top.push_back(link);
  r.links.links_used = 1;
  r.energy.gpu_seconds.busy_s = compute_s;
  r.algorithms.push_back(
      {CollectiveKind::kAllReduce, CommDim::kTp, sim::Algorithm::kRing, collectives, 8});
  r.sim_ops = 100;
  return r;
}

TEST(SteadyState, ExtendsEveryAdditiveFigureLinearlyInMicroBatches) {
  const TrainingPlan plan = plan_of_16_micro_batches();
  analysis::SteadyStateUse use;
  use.extended = true;
  use.micro_batches = 16;
  use.small_micro_batches = 6;
  use.large_micro_batches = 8;
  use.period_s = 2;
  // f(16) = f(8) + (16 - 8) / (8 - 6) x (f(8) - f(6)) = f(8) + 4 (f(8) - f(6)).
  const auto small = short_step(10, 6, 1, 0, 10, 1, 12);
  const auto large = short_step(14, 8, 2, 0.5, 14, 1.5, 16);
  const auto r = analysis::extend_step_report(plan, small, large, use, 10, 10);
  EXPECT_DOUBLE_EQ(r.step_time_s, 30);
  EXPECT_DOUBLE_EQ(r.breakdown.step_time_s, 30);
  EXPECT_DOUBLE_EQ(r.breakdown.compute_s, 16);
  EXPECT_DOUBLE_EQ(r.breakdown.exposed_comm(CommDim::kTp), 14);
  EXPECT_DOUBLE_EQ(r.critical_path.length_s, 30);
  EXPECT_DOUBLE_EQ(r.critical_path.seconds(analysis::PathKind::kForward), 30);
  ASSERT_EQ(r.path_operations.size(), 2u);
  EXPECT_EQ(r.path_operations[0].label, "a");  // 2 + 4 x 1 = 6 s
  EXPECT_DOUBLE_EQ(r.path_operations[0].seconds, 6);
  EXPECT_DOUBLE_EQ(r.path_operations[1].seconds, 2.5);  // absent from the shorter step: 0 there
  ASSERT_EQ(r.links.top.size(), 1u);
  EXPECT_DOUBLE_EQ(r.links.top[0].bytes, 30);
  EXPECT_DOUBLE_EQ(r.links.top[0].busy_s, 3.5);
  EXPECT_DOUBLE_EQ(r.links.top[0].busy_fraction, 3.5 / 30);
  EXPECT_DOUBLE_EQ(r.links.top[0].mean_utilisation, 30 / (100 * 30.0));
  EXPECT_DOUBLE_EQ(r.energy.gpu_seconds.busy_s, 16);
  ASSERT_EQ(r.algorithms.size(), 1u);
  EXPECT_EQ(r.algorithms[0].collectives, 32u);
  EXPECT_EQ(r.sim_ops, 200u);  // what ran: both shorter steps
  // The plan's figures: the whole step's tokens over the extended time.
  EXPECT_DOUBLE_EQ(r.tokens_per_step, 16.0 * 4096);
  EXPECT_DOUBLE_EQ(r.tokens_per_s, 16.0 * 4096 / 30);
  EXPECT_TRUE(r.steady_state.extended);
}

}  // namespace
}  // namespace racksim
