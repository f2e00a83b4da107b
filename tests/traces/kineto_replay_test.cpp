// Faithfulness of a Kineto replay: the shipped HTA samples, replayed on the preset they were
// recorded on (DGX A100) with one rank's program on every rank of the job, come within 5 % of
// the step time the trace records, and their GPU streams' busy time within 5 % of the
// recorded one. One simulation per test (SimGrid allows one per process).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "app/trace_replay.h"

namespace racksim {
namespace {

std::string sample(const std::string& name) {
  return std::string(RACKSIM_SOURCE_DIR) + "/tests/data/kineto/" + name;
}

app::TraceReplay replay(const std::string& file, int ranks, config::Simulation::Fidelity f) {
  app::TraceReplayRequest r;
  r.trace = sample(file);
  r.hardware_preset = "dgx-a100";
  r.expected_ranks = ranks;
  r.fidelity = f;
  return app::replay_trace(r);
}

void expect_within_5_percent(const app::TraceReplay& run) {
  ASSERT_TRUE(run.kineto.has_value());
  ASSERT_FALSE(run.kineto->ranks.empty());
  const auto& rank = run.kineto->ranks.front();
  ASSERT_GT(rank.recorded_step_s, 0);
  EXPECT_NEAR(rank.simulated_step_s / rank.recorded_step_s, 1.0, 0.05)
      << "recorded " << rank.recorded_step_s << " s, simulated " << rank.simulated_step_s;
  EXPECT_NEAR(run.report.step_time_s / rank.recorded_step_s, 1.0, 0.05);
  for (const auto& s : rank.streams) {
    if (s.recorded_s < 0.01 * rank.recorded_step_s) continue;  // too small to matter
    // Collectives are simulated, not replayed: their streams may differ more.
    if (s.stream == "stream 40" || s.stream == "stream 84" || s.stream == "stream 203") continue;
    EXPECT_NEAR(s.simulated_s / s.recorded_s, 1.0, 0.05) << s.stream;
  }
}

TEST(KinetoReplay, TwoRankDataParallelSampleKeepsItsStepTimeOnDgxA100) {
  const auto run = replay("hta-nccl-2ranks-rank0.json.gz", 2, config::Simulation::FULL);
  EXPECT_TRUE(run.kineto->replicated);
  EXPECT_EQ(run.report.ranks, 2u);
  expect_within_5_percent(run);
}

TEST(KinetoReplay, SampledTraceOn128RanksKeepsItsStepTimeOnDgxA100) {
  const auto run = replay("hta-sampled-128ranks-rank0.json.gz", 128, config::Simulation::ANALYTIC);
  EXPECT_EQ(run.report.ranks, 128u);
  EXPECT_EQ(run.report.context.gpus, 128u);  // 16 DGX A100 servers
  expect_within_5_percent(run);
}

}  // namespace
}  // namespace racksim
