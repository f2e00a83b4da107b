// Failures, checkpoints and cost of a whole run against their closed forms: the Llama 3 fleet
// rate, Young's and Daly's intervals, the goodput formulas, the rental and owned cost.
#include <gtest/gtest.h>

#include <algorithm>
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

// Daly 2006, eq. 37: sqrt(2 delta M) (1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9) - delta.
TEST(Goodput, DalyIntervalClosedForm) {
  // delta = 200, M = 10000: delta / 2M = 0.01, sqrt(2 delta M) = 2000.
  EXPECT_NEAR(analysis::daly_interval_s(200, 10000), 2000 * (1 + 0.1 / 3 + 0.01 / 9) - 200, 1e-9);
  // A checkpoint longer than 2M: checkpoint every M.
  EXPECT_DOUBLE_EQ(analysis::daly_interval_s(300, 100), 100);
  // Daly's wall time per tau of work: M e^(R/M) (e^((tau + delta)/M) - 1).
  EXPECT_NEAR(analysis::daly_goodput_fraction(2000, 100, 600, 20000),
              2000 / (20000 * std::exp(0.03) * (std::exp(0.105) - 1)), 1e-12);
}

// When checkpoints are short against M, Daly's interval tends to Young's: with x = delta / 2M,
// tau_D / tau_Y - 1 = sqrt(x) / 3 + x / 9 - sqrt(x) (the "- delta" is sqrt(x) tau_Y), below 1e-3
// at delta / M = 1e-6.
TEST(Goodput, DalyIntervalTendsToYoungsWhenCheckpointsAreShort) {
  const double mtbf = 44 * 3600.0;
  for (double delta : {0.158, 1.58, 15.8}) {
    const double young = analysis::young_interval_s(delta, mtbf);
    const double daly = analysis::daly_interval_s(delta, mtbf);
    const double x = delta / (2 * mtbf);
    EXPECT_NEAR(daly / young - 1, std::sqrt(x) / 3 + x / 9 - delta / young, 1e-12);
    EXPECT_LT(daly, young);  // the "- delta" dominates
  }
  EXPECT_NEAR(analysis::daly_interval_s(0.158, mtbf) / analysis::young_interval_s(0.158, mtbf), 1,
              1e-3);
  // Goodputs agree to second order in (tau + delta + R) / M.
  const double delta = 2.8, restart = 603;
  const double tau = analysis::daly_interval_s(delta, mtbf);
  EXPECT_NEAR(analysis::daly_goodput_fraction(tau, delta, restart, mtbf),
              analysis::goodput_fraction(tau, delta, restart, mtbf), 1e-4);
}

// Daly's interval maximizes his goodput: better than Young's, halving or doubling, and a scan.
TEST(Goodput, DalyIntervalMaximizesDalyGoodput) {
  const double delta = 600, mtbf = 3 * 3600.0, restart = 600;
  const double tau = analysis::daly_interval_s(delta, mtbf);
  const auto g = [&](double t) { return analysis::daly_goodput_fraction(t, delta, restart, mtbf); };
  EXPECT_GT(g(tau), g(analysis::young_interval_s(delta, mtbf)));
  EXPECT_GT(g(tau), g(tau / 2));
  EXPECT_GT(g(tau), g(tau * 2));
  double best_scanned = 0;
  for (double t = 100; t < 20000; t += 10) best_scanned = std::max(best_scanned, g(t));
  EXPECT_NEAR(g(tau), best_scanned, 1e-4);
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
  EXPECT_DOUBLE_EQ(g.young_interval_s, std::sqrt(2 * write_s * mtbf_s));
  EXPECT_DOUBLE_EQ(g.interval_s, analysis::daly_interval_s(write_s, mtbf_s));
  EXPECT_DOUBLE_EQ(g.goodput,
                   analysis::daly_goodput_fraction(g.interval_s, write_s, 300 + write_s, mtbf_s));
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
