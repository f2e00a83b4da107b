#include "analysis/goodput.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace racksim::analysis {

ReliabilityModel ReliabilityModel::from_hardware(const config::Hardware& hardware) {
  const config::Reliability& r = hardware.reliability();
  ReliabilityModel m;
  m.gpu_failures_per_hour = r.gpu_failures_per_hour();
  m.node_failures_per_hour = r.node_failures_per_hour();
  m.network_failures_per_hour = r.network_failures_per_hour();
  m.software_failures_per_hour = r.software_failures_per_hour();
  m.storage_write_bytes_per_s = r.storage_write_bytes_per_s();
  m.node_storage_bytes_per_s = r.node_storage_bytes_per_s();
  m.restart_s = r.restart_s();
  m.checkpoint_interval_s = r.checkpoint_interval_s();
  m.source = r.source();
  return m;
}

double ReliabilityModel::failures_per_hour(int gpus, int nodes) const {
  return gpus * (gpu_failures_per_hour + network_failures_per_hour + software_failures_per_hour) +
         nodes * node_failures_per_hour;
}

double young_interval_s(double checkpoint_write_s, double mtbf_s) {
  return std::sqrt(2 * checkpoint_write_s * mtbf_s);
}

double goodput_fraction(double interval_s, double checkpoint_write_s, double restart_s,
                        double mtbf_s) {
  const double period = interval_s + checkpoint_write_s;
  if (!(period > 0)) return 0;
  const double lost_per_failure = period / 2 + restart_s;
  const double surviving = std::isinf(mtbf_s) ? 1 : 1 - lost_per_failure / mtbf_s;
  return std::max(0.0, interval_s / period * surviving);
}

double daly_interval_s(double checkpoint_write_s, double mtbf_s) {
  if (checkpoint_write_s >= 2 * mtbf_s) return mtbf_s;
  const double x = checkpoint_write_s / (2 * mtbf_s);
  return std::sqrt(2 * checkpoint_write_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) -
         checkpoint_write_s;
}

double daly_goodput_fraction(double interval_s, double checkpoint_write_s, double restart_s,
                             double mtbf_s) {
  if (!(interval_s > 0)) return 0;
  const double period = interval_s + checkpoint_write_s;
  if (std::isinf(mtbf_s)) return interval_s / period;
  // expm1 keeps the precision when the period is a tiny fraction of M.
  const double wall_s = mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1(period / mtbf_s);
  return interval_s / wall_s;
}

double checkpoint_bytes(double total_params, double weight_bytes_per_param) {
  return total_params * (weight_bytes_per_param + kOptimizerBytesPerParam);
}

Goodput run_goodput(const ReliabilityModel& model, int gpus, int nodes, double ckpt_bytes,
                    double ideal_time_s) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Goodput g;
  g.checkpoint_bytes = ckpt_bytes;
  g.ideal_time_s = ideal_time_s;
  const double write_bytes_per_s =
      std::min(model.storage_write_bytes_per_s, nodes * model.node_storage_bytes_per_s);
  g.checkpoint_write_s = write_bytes_per_s > 0 ? ckpt_bytes / write_bytes_per_s : 0;
  g.restart_s = model.restart_s + g.checkpoint_write_s;
  g.failures_per_hour = model.failures_per_hour(gpus, nodes);
  g.mtbf_s = g.failures_per_hour > 0 ? 3600 / g.failures_per_hour : kInf;
  g.interval_optimal = !(model.checkpoint_interval_s > 0);
  if (!std::isinf(g.mtbf_s)) g.young_interval_s = young_interval_s(g.checkpoint_write_s, g.mtbf_s);
  if (!g.interval_optimal) {
    g.interval_s = model.checkpoint_interval_s;
    g.goodput = daly_goodput_fraction(g.interval_s, g.checkpoint_write_s, g.restart_s, g.mtbf_s);
  } else if (std::isinf(g.mtbf_s)) {
    g.interval_s = ideal_time_s;  // nothing fails: one checkpoint at the end
    g.goodput = daly_goodput_fraction(g.interval_s, g.checkpoint_write_s, g.restart_s, g.mtbf_s);
  } else if (g.checkpoint_write_s > 0) {
    g.interval_s = daly_interval_s(g.checkpoint_write_s, g.mtbf_s);
    g.goodput = daly_goodput_fraction(g.interval_s, g.checkpoint_write_s, g.restart_s, g.mtbf_s);
  } else {
    // Free checkpoints: the limit tau -> 0 of Daly's model, tau / (M e^(R/M) tau / M).
    g.interval_s = 0;
    g.goodput = std::exp(-g.restart_s / g.mtbf_s);
  }
  g.effective_time_s = g.goodput > 0 ? ideal_time_s / g.goodput : kInf;
  g.expected_failures = std::isinf(g.mtbf_s) ? 0 : g.effective_time_s / g.mtbf_s;
  g.checkpoints = g.interval_s > 0 ? ideal_time_s / g.interval_s : 0;
  return g;
}

nlohmann::ordered_json goodput_json(const Goodput& g) {
  nlohmann::ordered_json j;
  j["goodput"] = g.goodput;
  j["ideal_time_s"] = g.ideal_time_s;
  j["effective_time_s"] = g.effective_time_s;
  j["failures_per_hour"] = g.failures_per_hour;
  j["mtbf_s"] = g.mtbf_s;
  j["expected_failures"] = g.expected_failures;
  j["checkpoint_bytes"] = g.checkpoint_bytes;
  j["checkpoint_write_s"] = g.checkpoint_write_s;
  j["checkpoint_interval_s"] = g.interval_s;
  j["checkpoint_interval"] = g.interval_optimal ? "daly" : "set";
  j["young_interval_s"] = g.young_interval_s;
  j["checkpoints"] = g.checkpoints;
  j["restart_s"] = g.restart_s;
  return j;
}

}  // namespace racksim::analysis
