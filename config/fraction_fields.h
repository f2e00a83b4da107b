// The scenario fields that are fractions in [kMinFraction, 1]: efficiencies and achievable
// shares of a peak. One table for every reader: the validator checks exactly these with
// Checker::efficiency (which refuses a name missing here), and `racksim calibrate` bounds a
// fitted field to [kMinFraction, 1] exactly when it is here, instead of guessing from its name.
#pragma once

#include <array>
#include <string_view>

namespace racksim::config {

// The smallest fraction a scenario may give: below 1 % of a peak is no hardware figure (an
// efficiency of 1e-300 once made a step of 1e300 s without a word), and `racksim calibrate`
// searches fractions from here.
inline constexpr double kMinFraction = 0.01;

inline constexpr std::array<std::string_view, 15> kFractionFields = {
    "hardware.compute.gemm",
    "hardware.compute.gemm_fp8",
    "hardware.compute.gemm_unaligned",
    "hardware.compute.gemm_sustained",
    "hardware.compute.sustained_clock_ratio",
    "hardware.compute.attention",
    "hardware.compute.elementwise",
    "hardware.compute.hbm",
    "hardware.compute.fp8_cast",
    "hardware.scale_up.efficiency",
    "hardware.scale_up.nvls_efficiency",
    "hardware.scale_up.aggregate_efficiency",
    "hardware.scale_out.efficiency",
    "hardware.scale_out.ethernet_efficiency",
    "hardware.pcie.efficiency",
};

// Whether `path` (a dotted scenario field, as --set and --params write it) is a fraction.
constexpr bool is_fraction_field(std::string_view path) {
  for (std::string_view field : kFractionFields) {
    if (field == path) return true;
  }
  return false;
}

}  // namespace racksim::config
