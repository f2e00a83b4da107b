// The pipeline bubble comes out of the simulated schedule; with equal stage times it must match
// the algebra: GPipe and 1F1B idle (p-1)/(m+p-1) of the pipeline time on the first stage.
// Also: the breakdown of the critical rank adds up to the step time.
#include <gtest/gtest.h>

#include <numeric>

#include "analysis/breakdown.h"
#include "analysis/report.h"
#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/hardware_presets.h"
#include "topologies/topology_graph.h"
#include "workloads/model_presets.h"
#include "workloads/training_step.h"

namespace racksim {
namespace {

// Equal stages: a tiny vocabulary makes the embedding and the output head negligible next to the
// layers, and pipeline sends overlap with compute.
config::Scenario pipeline_scenario(int stages, int micro_batches,
                                   config::Training::Schedule schedule) {
  config::Scenario s;
  s.set_name("pipeline");
  *s.mutable_model() = *model_preset("llama3-8b");
  s.mutable_model()->set_vocab_size(256);
  s.mutable_model()->set_num_layers(8 * stages);
  *s.mutable_hardware() = *topo::hardware_preset("dgx-h100");
  s.mutable_hardware()->set_nodes(1);
  auto* l = s.mutable_layout();
  l->set_tp(1);
  l->set_cp(1);
  l->set_dp(1);
  l->set_pp(stages);
  auto* t = s.mutable_training();
  t->set_global_batch_size(micro_batches);
  t->set_micro_batch_size(1);
  t->set_seq_length(4096);
  t->set_recompute(config::Training::NONE);
  t->set_schedule(schedule);
  t->set_dtype(config::BF16);
  t->set_grad_reduce_dtype(config::FP32);
  t->set_pp_comm_overlap(true);
  s.mutable_sim()->set_fidelity(config::Simulation::FULL);
  return s;
}

analysis::StepReport simulate(const config::Scenario& s) {
  const TrainingStep step = build_training_step(s);
  const topo::Topology topology = topo::build_cluster(s.hardware());
  std::vector<uint32_t> gpus(step.graph.num_ranks());
  std::iota(gpus.begin(), gpus.end(), 0u);
  const auto result =
      sim::simulate(step.graph, topology, gpus, sim::ComputeModel::from_hardware(s.hardware()), {});
  return analysis::make_step_report(s, step, result);
}

struct PipelineCase {
  int stages;
  int micro_batches;
  config::Training::Schedule schedule;
};

class Bubble : public ::testing::TestWithParam<PipelineCase> {};

TEST_P(Bubble, MatchesTheClosedForm) {
  const auto c = GetParam();
  const auto report = simulate(pipeline_scenario(c.stages, c.micro_batches, c.schedule));
  const auto& b = report.breakdown;
  // The pipeline's own time: everything but the optimizer step at the end.
  const double pipeline_s = report.step_time_s - b.optimizer_s;
  const double expected = (c.stages - 1.0) / (c.micro_batches + c.stages - 1.0);
  EXPECT_EQ(b.rank, 0u) << "the first stage finishes last";
  EXPECT_NEAR(b.bubble_s / pipeline_s, expected, 0.01 * expected)
      << "bubble " << b.bubble_s << " s of " << pipeline_s << " s";
}

INSTANTIATE_TEST_SUITE_P(Schedules, Bubble,
                         ::testing::Values(PipelineCase{4, 8, config::Training::ONE_F_ONE_B},
                                           PipelineCase{2, 16, config::Training::ONE_F_ONE_B},
                                           PipelineCase{8, 8, config::Training::ONE_F_ONE_B},
                                           PipelineCase{4, 8, config::Training::GPIPE}));

TEST(Breakdown, AddsUpToTheStepTime) {
  auto s = pipeline_scenario(4, 8, config::Training::ONE_F_ONE_B);
  s.mutable_training()->set_pp_comm_overlap(false);
  s.mutable_layout()->set_pp(2);
  s.mutable_layout()->set_tp(2);
  s.mutable_layout()->set_dp(2);
  s.mutable_training()->set_global_batch_size(16);
  s.mutable_training()->set_recompute(config::Training::FULL);
  const auto report = simulate(s);
  const auto& b = report.breakdown;
  EXPECT_NEAR(b.total_s(), report.step_time_s, 1e-3 * report.step_time_s);
  EXPECT_GT(b.compute_s, 0);
  EXPECT_GT(b.recompute_s, 0);
  EXPECT_GT(b.exposed_comm(CommDim::kTp), 0);
  EXPECT_GT(b.exposed_comm(CommDim::kDp), 0);
  EXPECT_GT(b.bubble_s, 0);
  // MFU B counts the recomputed forward: with full recompute it is above MFU A.
  EXPECT_GT(report.mfu.hardware, report.mfu.model);
}

}  // namespace
}  // namespace racksim
