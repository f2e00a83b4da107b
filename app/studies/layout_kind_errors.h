// A fit's errors split by kind of layout (analysis/validation_evidence.h, layout_kind: where a
// layout's tensor-parallel and pipeline traffic runs). On vTrain's A100 rows the misses follow
// the kind more than the model's size (docs/validation.md), so a calibration report shows the
// kinds beside its groups: a user fitting their own cluster sees which layouts the fit leaves off.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace racksim::app {

struct LayoutKindErrors {
  std::string kind;
  int points = 0;
  double mean_abs_relative = 0;  // mean |predicted / measured - 1|
  double mean_relative = 0;      // signed
};

// Per kind of the points' `kinds` (one per point, as `predicted` and `measured`), the largest
// mean |error| first (ties by name). Points without a prediction or a measurement (<= 0) are left
// out, as analysis::group_by_key leaves them.
std::vector<LayoutKindErrors> errors_by_layout_kind(const std::vector<std::string>& kinds,
                                                    const std::vector<double>& predicted,
                                                    const std::vector<double>& measured);

// "  errors by kind of layout (<what>):\n    <kind>: 5 points, mean |error| 9.6 %, mean -9.3 %\n"
// ...; empty where the points hold fewer than two kinds.
std::string layout_kind_lines(const std::vector<std::string>& kinds,
                              const std::vector<double>& predicted,
                              const std::vector<double>& measured, const char* what);

// The same as a JSON array of {kind, points, mean_abs_relative, mean_relative}.
nlohmann::ordered_json layout_kind_json(const std::vector<std::string>& kinds,
                                        const std::vector<double>& predicted,
                                        const std::vector<double>& measured);

}  // namespace racksim::app
