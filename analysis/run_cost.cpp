#include "analysis/run_cost.h"

namespace racksim::analysis {

CostModel CostModel::from_hardware(const config::Hardware& hardware) {
  const config::Cost& c = hardware.cost();
  CostModel m;
  m.owned = c.basis() == config::Cost::OWNED;
  m.gpu_hour_price = c.gpu_hour_price();
  m.system_price_per_gpu = c.system_price_per_gpu();
  m.lifetime_years = c.lifetime_years();
  m.electricity_price_per_kwh = c.electricity_price_per_kwh();
  m.source = c.source();
  return m;
}

double CostModel::capital_per_gpu_hour() const {
  return lifetime_years > 0 ? system_price_per_gpu / (lifetime_years * kHoursPerYear) : 0;
}

RunCost run_cost(const CostModel& model, int gpus, double wall_s, double facility_j,
                 double tokens) {
  RunCost c;
  c.owned = model.owned;
  c.tokens = tokens;
  c.gpu_hours = gpus * wall_s / 3600;
  c.rental_usd = c.gpu_hours * model.gpu_hour_price;
  c.capital_usd = c.gpu_hours * model.capital_per_gpu_hour();
  c.electricity_usd = facility_j / kJoulesPerKwh * model.electricity_price_per_kwh;
  return c;
}

nlohmann::ordered_json cost_json(const CostModel& model, const RunCost& cost) {
  nlohmann::ordered_json j;
  j["basis"] = model.owned ? "owned" : "rental";
  j["usd"] = cost.usd();
  j["usd_per_million_tokens"] = cost.usd_per_million_tokens();
  j["gpu_hours"] = cost.gpu_hours;
  j["rental_usd"] = cost.rental_usd;
  j["owned_usd"] = cost.owned_usd();
  j["owned_capital_usd"] = cost.capital_usd;
  j["owned_electricity_usd"] = cost.electricity_usd;
  j["gpu_hour_price"] = model.gpu_hour_price;
  j["system_price_per_gpu"] = model.system_price_per_gpu;
  j["lifetime_years"] = model.lifetime_years;
  j["electricity_price_per_kwh"] = model.electricity_price_per_kwh;
  j["source"] = model.source;
  return j;
}

}  // namespace racksim::analysis
