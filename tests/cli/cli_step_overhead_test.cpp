// hardware.scale_out.step_overhead_s through `racksim run`: a step that spans nodes grows by
// exactly the overhead (every rank waits for it once, after the optimizer), a step on one node
// does not, and a negative overhead is refused before any simulation (exit 2, the field named).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::TempDir;

// Llama-3 8B cut to 2 layers, data parallelism over `nodes` DGX H100.
std::string scenario(int nodes) {
  return R"pb(model { preset: "llama3-8b" num_layers: 2 }
              hardware { preset: "dgx-h100" nodes:)pb" +
         std::to_string(nodes) + R"pb(}
                                      layout { tp: 1 }
              training { global_batch_size: 16 seq_length: 2048 }
         )pb";
}

double step_time_s(int nodes, const std::vector<std::string>& sets) {
  TempDir dir;
  const auto run = testing::run_scenario_report(dir, scenario(nodes), sets);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run.report.is_object() ? run.report["step_time_s"].get<double>() : 0;
}

TEST(CliStepOverhead, AddsItselfToAStepAcrossNodes) {
  const double plain = step_time_s(2, {});
  const double with = step_time_s(2, {"hardware.scale_out.step_overhead_s=0.25"});
  ASSERT_GT(plain, 0);
  EXPECT_NEAR(with - plain, 0.25, 1e-9);
}

TEST(CliStepOverhead, OneNodeDoesNotPayIt) {
  const double plain = step_time_s(1, {});
  EXPECT_DOUBLE_EQ(step_time_s(1, {"hardware.scale_out.step_overhead_s=0.25"}), plain);
}

TEST(CliStepOverhead, NegativeIsAnInputError) {
  TempDir dir;
  const auto run =
      testing::run_scenario_report(dir, scenario(2), {"hardware.scale_out.step_overhead_s=-1"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("hardware.scale_out.step_overhead_s"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace racksim
