// Failures and checkpoints of a whole training run: how much of the wall time trains.
//
// The job stops when any part fails (synchronous training), so the cluster's failure rate is
// the sum over its parts (hardware.reliability):
//   lambda = GPUs x (gpu + network + software rates) + nodes x node rate   [per hour]
//   M = 1 / lambda                                                         (mean time between)
// A checkpoint holds the weights and the AdamW states (FP32 master weights and two moments,
// the memory ledger's 12 bytes per parameter): P x (weight bytes + 12). It is written at
//   min(storage_write_bytes_per_s, nodes x node_storage_bytes_per_s)
// in delta seconds, and read back at the same rate after a failure; a restart costs
// R = restart_s + that read. Between checkpoints the job trains tau seconds. To first order a
// failure loses half a period (tau + delta) / 2 and R; per second of wall time
//   goodput_1 = tau / (tau + delta) x (1 - ((tau + delta) / 2 + R) / M),
// maximized by Young's (1974) interval tau_Y = sqrt(2 delta M). With exponentially distributed
// failures (failures during restarts and checkpoints counted too) the expected wall time per
// tau of work is M e^(R/M) (e^((tau + delta)/M) - 1) (Daly 2006, FGCS 22(3), eq. 13), so
//   goodput = tau / (M e^(R/M) (e^((tau + delta)/M) - 1)),
// which Daly's higher-order interval maximizes (eq. 37):
//   tau_D = sqrt(2 delta M) (1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9) - delta  (delta < 2M)
//   tau_D = M                                                                       (otherwise)
// tau_D -> tau_Y when delta << M. The plan uses Daly's model and interval.
// Effective time to train = ideal time / goodput. Units: seconds, bytes.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "proto/scenario.pb.h"

namespace racksim::analysis {

constexpr double kOptimizerBytesPerParam = 12;  // FP32 master weights + two FP32 moments

// hardware.reliability, resolved.
struct ReliabilityModel {
  double gpu_failures_per_hour = 0;
  double node_failures_per_hour = 0;
  double network_failures_per_hour = 0;
  double software_failures_per_hour = 0;
  double storage_write_bytes_per_s = 0;
  double node_storage_bytes_per_s = 0;
  double restart_s = 0;
  double checkpoint_interval_s = 0;  // 0: Daly's optimum
  std::string source;

  static ReliabilityModel from_hardware(const config::Hardware& hardware);
  double failures_per_hour(int gpus, int nodes) const;
};

// Young's interval sqrt(2 delta M).
double young_interval_s(double checkpoint_write_s, double mtbf_s);
// The first-order fraction of wall time that trains (0 when failures outpace progress).
double goodput_fraction(double interval_s, double checkpoint_write_s, double restart_s,
                        double mtbf_s);
// Daly's higher-order interval (M when delta >= 2M).
double daly_interval_s(double checkpoint_write_s, double mtbf_s);
// Daly's fraction of wall time that trains: tau / (M e^(R/M) (e^((tau + delta)/M) - 1)).
double daly_goodput_fraction(double interval_s, double checkpoint_write_s, double restart_s,
                             double mtbf_s);

struct Goodput {
  double checkpoint_bytes = 0;
  double checkpoint_write_s = 0;
  double restart_s = 0;  // restart_s plus reading the checkpoint back
  double failures_per_hour = 0;
  double mtbf_s = 0;
  double interval_s = 0;
  double young_interval_s = 0;   // for comparison (0 when nothing fails)
  bool interval_optimal = true;  // Daly's optimum (not hardware.reliability.checkpoint_interval_s)
  double goodput = 1;
  double ideal_time_s = 0;
  double effective_time_s = 0;
  double expected_failures = 0;
  double checkpoints = 0;
};

// Goodput of a run that needs `ideal_time_s` of failure-free training on `gpus` GPUs in `nodes`
// nodes, checkpointing `checkpoint_bytes`.
Goodput run_goodput(const ReliabilityModel& model, int gpus, int nodes, double checkpoint_bytes,
                    double ideal_time_s);

// P x (bytes of the training dtype + the optimizer's 12).
double checkpoint_bytes(double total_params, double weight_bytes_per_param);

nlohmann::ordered_json goodput_json(const Goodput& goodput);

}  // namespace racksim::analysis
