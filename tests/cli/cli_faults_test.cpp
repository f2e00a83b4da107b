// Faults through `racksim run` (docs/faults.md): the report's faults section (step with and
// without the faults, where each lands on the critical path) and the loader's checks (exit 2,
// the file, the line and the field, before any simulation).
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_racksim.h"
#include "topologies/faults.h"

namespace racksim {
namespace {

using testing::TempDir;

// Llama-3 8B cut to 2 layers, pure data parallelism over one DGX H100, the gradients reduced
// after the backward (no overlap): the step is compute, then the all-reduce, then the optimizer.
const std::string kScenario =
    R"pb(model { preset: "llama3-8b" num_layers: 2 }
         hardware { preset: "dgx-h100" nodes: 1 }
         layout { tp: 1 dp: 8 }
         training { global_batch_size: 8 seq_length: 2048 overlap_grad_reduce: false }
    )pb";

double compute_on_path(const nlohmann::json& by_kind) {
  double total = 0;
  for (const char* kind :
       {"forward", "backward", "backward_weight", "recompute", "optimizer", "other_compute"}) {
    total += by_kind.value(kind, 0.0);
  }
  return total;
}

// report.json's faults section of kScenario with `faults`; fails the test if the run failed.
nlohmann::json faults_report(const std::string& faults, nlohmann::json* report) {
  TempDir dir;
  const auto run = testing::run_scenario_report(dir, kScenario + "faults { " + faults + " }", {});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  *report = run.report;
  return run.report.is_object() ? run.report.value("faults", nlohmann::json()) : nlohmann::json();
}

// Every rank runs the same kernels, so the slow rank's kernels set the path: the step grows by
// the slowdown times the compute on the baseline's critical path.
TEST(CliFaults, StragglerCostsItsSlowdownOfTheComputeOnThePath) {
  nlohmann::json report;
  const auto faults = faults_report("straggler { rank: 3 slowdown: 0.2 }", &report);
  ASSERT_TRUE(faults.is_object());
  const double cost_s = faults["cost_s"].get<double>();
  const double faulted_compute = compute_on_path(report["critical_path"]["by_kind_s"]);
  const double baseline_compute =
      faulted_compute - compute_on_path(faults["critical_path_delta_s"]);
  EXPECT_NEAR(faults["step_time_s"].get<double>(), report["step_time_s"].get<double>(), 1e-12);
  EXPECT_NEAR(cost_s, 0.2 * baseline_compute, 1e-3 * cost_s);
  ASSERT_EQ(faults["list"].size(), 1u);
  EXPECT_EQ(faults["list"][0]["kind"], "straggler");
  EXPECT_EQ(faults["list"][0]["ranks"], nlohmann::json::array({3}));
  // The whole path is on rank 3 (every rank waits for it): it lands on its largest compute kind.
  std::string largest;
  double largest_s = -1;
  for (const auto& [kind, seconds] : report["critical_path"]["by_kind_s"].items()) {
    if (kind != "offload" && kind != "wait" && seconds.get<double>() > largest_s) {
      largest = kind;
      largest_s = seconds.get<double>();
    }
  }
  EXPECT_EQ(faults["list"][0]["lands_on"], largest);
}

// The step has no host work (no CPU optimizer): a slow host is accepted, reported, and free.
TEST(CliFaults, SlowHostWithoutHostWorkCostsNothingAndSaysSo) {
  nlohmann::json report;
  const auto faults = faults_report("slow_host { node: 0 factor: 3 }", &report);
  ASSERT_TRUE(faults.is_object());
  EXPECT_DOUBLE_EQ(faults["cost_s"].get<double>(), 0);
  EXPECT_EQ(faults["list"][0]["lands_on"], "off the critical path");
  EXPECT_NE(faults["list"][0].value("note", "").find("no host work"), std::string::npos);
}

// Every GPU drawn around the median: the step waits for the slowest, so it costs what a
// straggler with the slowest GPU's factor costs, and lands on that GPU. A spread of 0 costs
// nothing.
TEST(CliFaults, GpuSpreadCostsWhatItsSlowestGpuCosts) {
  nlohmann::json report;
  const auto faults = faults_report("gpu_spread { relative_sd: 0.04 seed: 11 }", &report);
  ASSERT_TRUE(faults.is_object());
  const topo::GpuSpread spread{0.04, 11};
  uint32_t slowest = 0;
  for (uint32_t g = 1; g < 8; ++g) {
    if (spread.factor(g) > spread.factor(slowest)) slowest = g;
  }
  ASSERT_GT(spread.factor(slowest), 1);
  const double faulted_compute = compute_on_path(report["critical_path"]["by_kind_s"]);
  const double baseline_compute =
      faulted_compute - compute_on_path(faults["critical_path_delta_s"]);
  const double cost_s = faults["cost_s"].get<double>();
  EXPECT_NEAR(cost_s, (spread.factor(slowest) - 1) * baseline_compute, 1e-3 * cost_s);
  ASSERT_EQ(faults["list"].size(), 1u);
  EXPECT_EQ(faults["list"][0]["kind"], "gpu_spread");
  EXPECT_EQ(faults["list"][0]["ranks"], nlohmann::json::array({slowest}));
  EXPECT_NE(faults["list"][0]["description"].get<std::string>().find(
                fmt::format("the slowest, rank {}, x{:.4f}", slowest, spread.factor(slowest))),
            std::string::npos)
      << faults["list"][0]["description"];

  const auto none = faults_report("gpu_spread { relative_sd: 0 }", &report);
  ASSERT_TRUE(none.is_object());
  EXPECT_DOUBLE_EQ(none["cost_s"].get<double>(), 0);
}

struct BadFault {
  std::string faults;
  std::string field;
  std::string detail;
};

class CliFaultErrors : public ::testing::TestWithParam<BadFault> {};

TEST_P(CliFaultErrors, ExitTwoNamingFileLineAndField) {
  TempDir dir;
  const std::string path =
      dir.write("bad.textproto", kScenario + "\nfaults {\n  " + GetParam().faults + "\n}\n");
  const auto result = testing::run_racksim({"run", path});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("bad.textproto:7"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(GetParam().field), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(GetParam().detail), std::string::npos) << result.err;
  EXPECT_EQ(result.out, "");
}

std::string entry_name(const ::testing::TestParamInfo<BadFault>& info) {
  std::string name = std::to_string(info.index) + "_";
  for (char c : info.param.field.substr(info.param.field.find('.') + 1)) {
    if (std::isalnum(static_cast<unsigned char>(c))) name += c;
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    Faults, CliFaultErrors,
    ::testing::Values(
        BadFault{"straggler { rank: 8 slowdown: 0.2 }", "faults.straggler", "rank 8"},
        BadFault{"straggler { rank: 1 }", "faults.straggler", "missing slowdown"},
        BadFault{"straggler { rank: 1 slowdown: 500 }", "faults.straggler", "slowdown"},
        BadFault{"degraded_link { rank: 0 bandwidth_factor: 1.5 }", "faults.degraded_link",
                 "bandwidth_factor"},
        BadFault{"degraded_link { rank: 0 bandwidth_factor: 0 }", "faults.degraded_link",
                 "bandwidth_factor"},
        BadFault{"dead_nic { node: 1 port: 0 }", "faults.dead_nic", "node 1"},
        BadFault{"dead_nic { node: 0 port: 8 }", "faults.dead_nic", "port 8"},
        BadFault{"slow_host { node: 0 factor: 0.5 }", "faults.slow_host", "factor"},
        BadFault{"gpu_spread { relative_sd: 0.5 }", "faults.gpu_spread.relative_sd",
                 "must be in [0, 0.2], got 0.5"},
        BadFault{"gpu_spread { seed: 3 }", "faults.gpu_spread.relative_sd", "missing"}),
    entry_name);

TEST(CliFaults, FaultsCannotBeFolded) {
  TempDir dir;
  const std::string path =
      dir.write("fold.textproto", kScenario +
                                      "sim { fold_replicas: true }\n"
                                      "faults { straggler { rank: 1 slowdown: 0.1 } }\n");
  const auto result = testing::run_racksim({"run", path});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("sim.fold_replicas"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("faults"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace racksim
