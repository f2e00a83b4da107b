#include "app/studies/floor_report.h"

#include <cmath>

#include <fmt/format.h>

namespace racksim::app {

std::string floor_per_group_line(const CalibrationSpec& spec, const std::vector<double>& closest_s,
                                 const std::vector<double>& measured_s) {
  if (!spec.measured.has_groups) return "";
  std::string out = "    the floor per group:";
  for (const auto& [name, e] : errors_by_group(spec, closest_s, measured_s)) {
    out += fmt::format(" {} {:.2f} % ({} points);", name, 100 * e.mean_abs_relative, e.points);
  }
  out.back() = '\n';
  return out;
}

std::string closest_step_line(const CalibrationSpec& spec, const CalibrationResult& r, size_t row,
                              double closest_s) {
  return fmt::format("    line {}: measured {:.4g} s, at best {:.4g} s ({:+.1f} %)\n",
                     point_source(spec.measured, spec.measured.points[row]), r.measured[row],
                     closest_s, 100 * (closest_s / r.measured[row] - 1));
}

std::string framework_floor_lines(const CalibrationSpec& spec, const CalibrationResult& r) {
  const analysis::MicroBatchFloor &any = r.floor, &own = r.framework_floor;
  // No family held its costs: the stricter floor is the floor above by construction.
  if (own.fixed_cost_families == 0 || own.closest_s.size() != r.measured.size()) return "";
  std::string out = fmt::format(
      "\n  with the step's own costs as each row's framework runs them (the gradients reduced "
      "after the last backward, no pipeline stages: the same at every micro-batch of {} "
      "families, between micro-batches that run the same kernels): floor {:.2f} % mean "
      "|error|",
      own.fixed_cost_families, 100 * own.mean_abs_relative);
  // A relative change below this is the solver's tolerance, not a row the bound moved.
  constexpr double kMoved = 1e-6;
  std::string moved;
  for (size_t i = 0; i < r.measured.size(); ++i) {
    if (std::abs(own.closest_s[i] / any.closest_s[i] - 1) < kMoved) continue;
    moved += closest_step_line(spec, r, i, own.closest_s[i]);
  }
  if (moved.empty()) return out + "; it moves no row further\n";
  return out + "; the rows it moves further:\n" + moved +
         floor_per_group_line(spec, own.closest_s, r.measured);
}

}  // namespace racksim::app
