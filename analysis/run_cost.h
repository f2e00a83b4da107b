// What GPU time costs (hardware.cost): rented at an all-in price per GPU-hour, or owned, the
// system's price per GPU written off over its lifetime plus the electricity the facility draws
// (IT energy x PUE, from analysis/energy.h) at a price per kWh.
//   rental = GPUs x hours x gpu_hour_price
//   owned  = GPUs x hours x system_price_per_gpu / (lifetime_years x 8766 h)
//            + facility kWh x electricity_price_per_kwh
// Units: seconds, joules, dollars.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "proto/scenario.pb.h"

namespace racksim::analysis {

constexpr double kHoursPerYear = 8766;  // 365.25 days
constexpr double kJoulesPerKwh = 3.6e6;

struct CostModel {
  bool owned = false;  // hardware.cost.basis == OWNED
  double gpu_hour_price = 0;
  double system_price_per_gpu = 0;
  double lifetime_years = 0;
  double electricity_price_per_kwh = 0;
  std::string source;

  static CostModel from_hardware(const config::Hardware& hardware);
  // The owned system's write-off per GPU-hour (0 without a price or a lifetime).
  double capital_per_gpu_hour() const;
};

struct RunCost {
  double gpu_hours = 0;
  double rental_usd = 0;
  double capital_usd = 0;      // owned: the write-off
  double electricity_usd = 0;  // owned: the facility's energy
  double owned_usd() const { return capital_usd + electricity_usd; }
  bool owned = false;
  double usd() const { return owned ? owned_usd() : rental_usd; }  // on the chosen basis
  double tokens = 0;
  double usd_per_million_tokens() const { return tokens > 0 ? usd() / (tokens / 1e6) : 0; }
};

// The cost of `gpus` GPUs for `wall_s` seconds that burned `facility_j` joules and trained
// `tokens` tokens.
RunCost run_cost(const CostModel& model, int gpus, double wall_s, double facility_j, double tokens);

nlohmann::ordered_json cost_json(const CostModel& model, const RunCost& cost);

}  // namespace racksim::analysis
