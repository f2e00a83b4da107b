// hardware.host.pipeline_handoff_bytes_per_s: each side of a pipeline hand-off spends its compute
// stream bytes / rate beyond the transfer. In the graph, one operation per side per hop and
// direction; through `racksim run`, a two-stage step of one micro-batch grows by exactly the two
// receivers' costs (the activation's on the last stage, the gradient's on the first; the
// senders' costs fall where their stage waits anyway); a rate that is not positive is refused
// before any simulation (exit 2, the field named).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/run_racksim.h"
#include "tests/support/training_scenario.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

using testing::TempDir;

struct Handoffs {
  int count = 0;
  double seconds = 0;
};

Handoffs handoffs_in_step(double rate) {
  auto s = testing::scenario(1, 4, 1, config::Training::ONE_F_ONE_B);
  s.mutable_layout()->set_virtual_stages(1);
  if (rate > 0) s.mutable_hardware()->mutable_host()->set_pipeline_handoff_bytes_per_s(rate);
  const TrainingStep step = build_training_step(resolve_training_plan(s));
  Handoffs h;
  for (OpId id = 0; id < step.graph.ops().size(); ++id) {
    const Op& op = step.graph.op(id);
    if (step.graph.label(op.label) != "pp.handoff") continue;
    ++h.count;
    h.seconds += op.duration_s;
  }
  return h;
}

TEST(PipelineHandoff, EachSideOfEachHopPaysBytesOverTheRate) {
  EXPECT_EQ(handoffs_in_step(0).count, 0);
  const double rate = 4e9;
  const Handoffs h = handoffs_in_step(rate);
  // 8 micro-batches, 3 hops, forward and backward, sender and receiver.
  const int ops = 8 * 3 * 2 * 2;
  EXPECT_EQ(h.count, ops);
  const double hidden_state = 1024.0 * 4096 * 2;  // tokens x hidden x BF16
  EXPECT_NEAR(h.seconds, ops * hidden_state / rate, 1e-12);
}

// Llama-3 8B cut to 2 layers on two pipeline stages of a DGX H100, one micro-batch of 2,048.
std::string two_stage_scenario() {
  return R"pb(model { preset: "llama3-8b" num_layers: 2 }
              hardware { preset: "dgx-h100" nodes: 1 gpus_per_node: 2 }
              layout { tp: 1 pp: 2 }
              training { global_batch_size: 1 micro_batch_size: 1 seq_length: 2048 }
         )pb";
}

double step_time_s(const std::vector<std::string>& sets) {
  TempDir dir;
  const auto run = testing::run_scenario_report(dir, two_stage_scenario(), sets);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run.report.is_object() ? run.report["step_time_s"].get<double>() : 0;
}

TEST(PipelineHandoff, AOneMicroBatchStepGrowsByTheTwoReceivers) {
  const double plain = step_time_s({});
  const double rate = 1e10;
  const double with = step_time_s({"hardware.host.pipeline_handoff_bytes_per_s=1e10"});
  ASSERT_GT(plain, 0);
  const double hidden_state = 2048.0 * 4096 * 2;
  EXPECT_NEAR(with - plain, 2 * hidden_state / rate, 1e-9);
}

TEST(PipelineHandoff, ARateThatIsNotPositiveIsAnInputError) {
  TempDir dir;
  const auto run = testing::run_scenario_report(dir, two_stage_scenario(),
                                                {"hardware.host.pipeline_handoff_bytes_per_s=0"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("hardware.host.pipeline_handoff_bytes_per_s"), std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace racksim
