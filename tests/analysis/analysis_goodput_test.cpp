// Failures, checkpoints and cost of a whole run against their closed forms: the Llama 3 fleet
// rate, Young's interval, the goodput formula, the rental and owned cost.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/goodput.h"
#include "analysis/run_cost.h"
#include "topologies/hardware_presets.h"

namespace racksim {
namespace {

using analysis::ReliabilityModel;

// The default rates are the Llama 3 paper's: 419 unexpected interruptions in 54 days on
// 16,384 H100 in 2,048 nodes.
TEST(Goodput, DefaultRatesReproduceTheLlama3Fleet) {
  const auto model = ReliabilityModel::from_hardware(topo::hardware_defaults());
  const double per_hour = model.failures_per_hour(16384, 2048);
  EXPECT_NEAR(per_hour * 54 * 24, 419, 0.05);
}

TEST(Goodput, YoungIntervalAndGoodputClosedForms) {
  EXPECT_DOUBLE_EQ(analysis::young_interval_s(100, 20000), 2000);
  // tau / (tau + delta) x (1 - ((tau + delta) / 2 + R) / M)
  EXPECT_DOUBLE_EQ(analysis::goodput_fraction(2000, 100, 600, 20000),
                   2000.0 / 2100 * (1 - (1050.0 + 600) / 20000));
  // Failures faster than progress: nothing trains.
  EXPECT_DOUBLE_EQ(analysis::goodput_fraction(2000, 100, 600, 1000), 0);
}

// Young's interval is the optimum to first order: halving or doubling it does worse.
TEST(Goodput, YoungIntervalMaximizesGoodput) {
  const double delta = 60, mtbf = 3 * 3600.0, restart = 600;
  const double tau = analysis::young_interval_s(delta, mtbf);
  const double best = analysis::goodput_fraction(tau, delta, restart, mtbf);
  EXPECT_GT(best, analysis::goodput_fraction(tau / 2, delta, restart, mtbf));
  EXPECT_GT(best, analysis::goodput_fraction(tau * 2, delta, restart, mtbf));
}

TEST(Goodput, RunGoodputFromRatesStorageAndCheckpointSize) {
  ReliabilityModel m;
  m.gpu_failures_per_hour = 1e-5;
  m.node_failures_per_hour = 2e-5;
  m.storage_write_bytes_per_s = 1e12;
  m.node_storage_bytes_per_s = 10e9;  // 64 nodes: 640 GB/s, below the storage's 1 TB/s
  m.restart_s = 300;
  const double bytes = analysis::checkpoint_bytes(405e9, 2);  // Llama 3 405B in BF16
  EXPECT_DOUBLE_EQ(bytes, 405e9 * 14);
  const auto g = analysis::run_goodput(m, 512, 64, bytes, 30 * 86400.0);
  const double write_s = bytes / 640e9;
  const double mtbf_s = 3600 / (512 * 1e-5 + 64 * 2e-5);
  EXPECT_DOUBLE_EQ(g.checkpoint_write_s, write_s);
  EXPECT_DOUBLE_EQ(g.restart_s, 300 + write_s);
  EXPECT_DOUBLE_EQ(g.mtbf_s, mtbf_s);
  EXPECT_DOUBLE_EQ(g.interval_s, std::sqrt(2 * write_s * mtbf_s));
  EXPECT_DOUBLE_EQ(g.goodput,
                   analysis::goodput_fraction(g.interval_s, write_s, 300 + write_s, mtbf_s));
  EXPECT_DOUBLE_EQ(g.effective_time_s, 30 * 86400.0 / g.goodput);
  EXPECT_NEAR(g.expected_failures, g.effective_time_s / mtbf_s, 1e-9);
}

TEST(Goodput, NothingFailsAndFreeCheckpointsGiveFullGoodput) {
  const auto g = analysis::run_goodput(ReliabilityModel{}, 8, 1, 1e12, 1000);
  EXPECT_DOUBLE_EQ(g.goodput, 1);
  EXPECT_DOUBLE_EQ(g.effective_time_s, 1000);
}

TEST(Cost, RentalIsGpuHoursTimesPrice) {
  analysis::CostModel m;
  m.gpu_hour_price = 3;
  const auto c = analysis::run_cost(m, 64, 3600, 0, 2e6);
  EXPECT_DOUBLE_EQ(c.gpu_hours, 64);
  EXPECT_DOUBLE_EQ(c.usd(), 192);
  EXPECT_DOUBLE_EQ(c.usd_per_million_tokens(), 96);
}

TEST(Cost, OwnedIsWriteOffPlusElectricity) {
  analysis::CostModel m;
  m.owned = true;
  m.system_price_per_gpu = 5 * analysis::kHoursPerYear;  // 1 $ per GPU-hour over 5 years
  m.lifetime_years = 5;
  m.electricity_price_per_kwh = 0.1;
  const auto c = analysis::run_cost(m, 64, 3600, 1000 * analysis::kJoulesPerKwh, 0);
  EXPECT_DOUBLE_EQ(c.capital_usd, 64);
  EXPECT_DOUBLE_EQ(c.electricity_usd, 100);
  EXPECT_DOUBLE_EQ(c.usd(), 164);
}

}  // namespace
}  // namespace racksim
