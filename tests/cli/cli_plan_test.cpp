// racksim plan and the energy and cost of racksim run, end to end: the plan's run figures hold
// together as their definitions say (steps, time, goodput, energy, GPU-hours, cost), bad input
// exits 2 before any output, and a run's GPU energy is the sum of state power x state time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::run_racksim;
using testing::TempDir;

// A 4-layer Llama 3 8B: small enough that every layout runs in a second.
constexpr const char* kSmallModel = R"(
model { preset: "llama3-8b" num_layers: 4 }
hardware { preset: "dgx-h100" nodes: 1 }
layout { tp: 1 pp: 1 }
training { global_batch_size: 16 micro_batch_size: 1 seq_length: 2048 }
)";

TEST(Plan, RunFiguresFollowFromTheBestStep) {
  TempDir dir;
  const std::string scenario = dir.write("small.textproto", kSmallModel);
  const auto out = dir.path() / "plan";
  const auto r =
      run_racksim({"plan", scenario, "--tokens", "1e9", "--clusters", "dgx-h100:1,hgx-b300:2@4.5",
                   "--set", "layout.tp=2,8", "--jobs", "2", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cheapest:"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("[2/2] hgx-b300:2"), std::string::npos) << r.err;  // progress on stderr
  const auto plan = nlohmann::json::parse(testing::read_file(out / "plan.json"));
  ASSERT_EQ(plan["clusters"].size(), 2u);
  EXPECT_EQ(plan["clusters"][1]["gpus"], 16);
  EXPECT_DOUBLE_EQ(plan["clusters"][1]["cost"]["gpu_hour_price"].get<double>(), 4.5);
  for (const auto& c : plan["clusters"]) {
    ASSERT_TRUE(c["found"].get<bool>()) << c.dump();
    EXPECT_EQ(c["search"]["layouts"], 2);
    const double step = c["step_time_s"], per_step = c["tokens_per_step"];
    const double steps = c["steps"];
    EXPECT_DOUBLE_EQ(steps, std::ceil(1e9 / per_step));
    const auto& g = c["goodput"];
    EXPECT_NEAR(g["ideal_time_s"].get<double>(), steps * step, 1e-9 * steps * step);
    const double effective = g["effective_time_s"];
    EXPECT_NEAR(effective, g["ideal_time_s"].get<double>() / g["goodput"].get<double>(),
                1e-9 * effective);
    EXPECT_GT(g["goodput"].get<double>(), 0.9);
    EXPECT_NEAR(c["energy_j"].get<double>(), c["step_energy_j"].get<double>() / step * effective,
                1e-9 * c["energy_j"].get<double>());
    EXPECT_NEAR(c["cost"]["gpu_hours"].get<double>(), c["gpus"].get<double>() * effective / 3600,
                1e-9 * effective);
    EXPECT_NEAR(c["cost"]["usd"].get<double>(),
                c["cost"]["gpu_hours"].get<double>() * c["cost"]["gpu_hour_price"].get<double>(),
                1e-9 * c["cost"]["usd"].get<double>());
  }
  const std::string svg = testing::read_file(out / "plan.svg");
  EXPECT_NE(svg.find("hgx-b300:2"), std::string::npos);
  EXPECT_NE(testing::read_file(out / "plan.csv").find("dgx-h100:1,dgx-h100,1,8,1,"),
            std::string::npos);
}

// Each cluster's line says how far its prediction is checked: the H100 in FP8 by NVIDIA's rows
// (its report's `validation`), the B300 by none.
TEST(Plan, SaysWhichClustersPredictionsTheValidationChecks) {
  TempDir dir;
  const std::string scenario = dir.write("small.textproto", kSmallModel);
  const auto out = dir.path() / "plan";
  const auto r = run_racksim({"plan", scenario, "--tokens", "1e9", "--clusters",
                              "dgx-h100:1,hgx-b300:1", "--set", "training.dtype=FP8", "--set",
                              "layout.tp=2,8", "--jobs", "2", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dgx-h100:1: 2 layouts, 2 fit, 2 simulated; checked: 16 rows in 2 tables"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("hgx-b300:1: 2 layouts, 2 fit, 2 simulated; no row of the README's "
                       "accuracy table checks it"),
            std::string::npos)
      << r.out;
  const auto plan = nlohmann::json::parse(testing::read_file(out / "plan.json"));
  EXPECT_EQ(plan["clusters"][0]["validation"]["checks"].size(), 2u);
  EXPECT_EQ(plan["clusters"][0]["validation"]["training_dtype"], "FP8");
  EXPECT_TRUE(plan["clusters"][1]["validation"]["checks"].empty());
  // The checked run nearest each cluster's best step, by model size and GPU count.
  EXPECT_NE(r.out.find("; nearest checked run "), std::string::npos) << r.out;
  EXPECT_EQ(plan["clusters"][0]["validation"]["nearest_run"]["this_run_gpus"], 8);
  EXPECT_TRUE(plan["clusters"][1]["validation"]["nearest_run"].is_null());
}

TEST(Plan, EmitJobsWritesOneRunPerLayoutThatFits) {
  TempDir dir;
  const std::string scenario = dir.write("small.textproto", kSmallModel);
  const auto jobs = dir.path() / "jobs.txt";
  const auto r = run_racksim({"plan", scenario, "--tokens", "1e9", "--clusters", "dgx-h100:1",
                              "--set", "layout.tp=1,2,3", "--emit-jobs", jobs.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string lines = testing::read_file(jobs);
  // tp 3 does not divide the heads: two runs, each at ANALYTIC fidelity with folding.
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 2);
  EXPECT_NE(lines.find("sim.fidelity=ANALYTIC"), std::string::npos);
}

TEST(Plan, BadClusterExitsTwoBeforeAnyOutput) {
  TempDir dir;
  const std::string scenario = dir.write("small.textproto", kSmallModel);
  const auto out = dir.path() / "plan";
  for (const char* clusters : {"dgx-h999:1", "dgx-h100:0", "dgx-h100", "dgx-h100:2@x"}) {
    const auto r = run_racksim(
        {"plan", scenario, "--tokens", "1e9", "--clusters", clusters, "--out", out.string()});
    EXPECT_EQ(r.exit_code, 2) << clusters;
    EXPECT_NE(r.err.find("--clusters"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  const auto r = run_racksim({"plan", scenario, "--tokens", "lots", "--clusters", "dgx-h100:1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--tokens"), std::string::npos) << r.err;
}

// GPU energy is busy, communicating and idle power times the GPU-seconds in each state; with
// all three powers equal it is GPUs x power x step time whatever the timeline.
TEST(RunEnergy, GpuEnergyIsStatePowerTimesStateTime) {
  TempDir dir;
  const auto a = testing::run_scenario_report(dir, kSmallModel, {"layout.tp=2"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto& e = a.report["energy"];
  const double step = a.report["step_time_s"];
  const auto& s = e["gpu_seconds"];
  const double busy = s["busy"], comm = s["comm"], idle = s["idle"];
  EXPECT_NEAR(busy + comm + idle, 8 * step, 1e-9 * step);
  EXPECT_GT(busy, 0);
  EXPECT_GT(idle + comm, 0);  // the 4-stage-free step still waits on TP all-reduces
  const auto& j = e["by_component_j"];
  EXPECT_NEAR(j["gpu_busy"].get<double>(), 700 * busy, 1e-9 * 700 * busy);
  EXPECT_NEAR(j["gpu_comm"].get<double>(), 315 * comm, 1e-6);
  EXPECT_NEAR(j["gpu_idle"].get<double>(), 140 * idle, 1e-6);
  EXPECT_NEAR(e["j_per_step"].get<double>(), 1.2 * e["it_j_per_step"].get<double>(), 1e-6);
  EXPECT_NEAR(e["j_per_token"].get<double>(),
              e["j_per_step"].get<double>() / a.report["tokens_per_step"].get<double>(), 1e-9);

  const auto flat = testing::run_scenario_report(
      dir, kSmallModel,
      {"layout.tp=2", "hardware.power.gpu_comm_w=700", "hardware.power.gpu_idle_w=700"});
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  const auto& fj = flat.report["energy"]["by_component_j"];
  const double gpu_j =
      fj["gpu_busy"].get<double>() + fj["gpu_comm"].get<double>() + fj["gpu_idle"].get<double>();
  EXPECT_NEAR(gpu_j, 8 * 700 * flat.report["step_time_s"].get<double>(), 1e-9 * gpu_j);
  EXPECT_NEAR(flat.report["energy"]["gpu_average_w"].get<double>(), 700, 1e-9);
}

TEST(RunEnergy, BadPowerFigureExitsTwoNamingTheField) {
  TempDir dir;
  const auto r = testing::run_scenario_report(dir, kSmallModel, {"hardware.power.pue=0.9"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("hardware.power.pue"), std::string::npos) << r.err;
  const auto n =
      testing::run_scenario_report(dir, kSmallModel, {"hardware.cost.gpu_hour_price=-1"});
  EXPECT_EQ(n.exit_code, 2);
  EXPECT_NE(n.err.find("hardware.cost.gpu_hour_price"), std::string::npos) << n.err;
}

}  // namespace
}  // namespace racksim
