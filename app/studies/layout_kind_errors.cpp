#include "app/studies/layout_kind_errors.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/calibration_fit.h"

namespace racksim::app {

std::vector<LayoutKindErrors> errors_by_layout_kind(const std::vector<std::string>& kinds,
                                                    const std::vector<double>& predicted,
                                                    const std::vector<double>& measured) {
  std::vector<LayoutKindErrors> out;
  for (const auto& [kind, g] : analysis::group_by_key(kinds, predicted, measured)) {
    const analysis::ErrorSummary e = analysis::error_summary(g.first, g.second);
    out.push_back({kind, static_cast<int>(e.points), e.mean_abs_relative, e.mean_relative});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const LayoutKindErrors& a, const LayoutKindErrors& b) {
                     return a.mean_abs_relative > b.mean_abs_relative;
                   });
  return out;
}

std::string layout_kind_lines(const std::vector<std::string>& kinds,
                              const std::vector<double>& predicted,
                              const std::vector<double>& measured, const char* what) {
  const std::vector<LayoutKindErrors> errors = errors_by_layout_kind(kinds, predicted, measured);
  if (errors.size() < 2) return "";
  std::string out = fmt::format("  errors by kind of layout ({}):\n", what);
  for (const LayoutKindErrors& k : errors) {
    out +=
        fmt::format("    {}: {} point{}, mean |error| {:.2f} %, mean {:+.2f} %\n", k.kind, k.points,
                    k.points == 1 ? "" : "s", 100 * k.mean_abs_relative, 100 * k.mean_relative);
  }
  return out;
}

nlohmann::ordered_json layout_kind_json(const std::vector<std::string>& kinds,
                                        const std::vector<double>& predicted,
                                        const std::vector<double>& measured) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const LayoutKindErrors& k : errors_by_layout_kind(kinds, predicted, measured)) {
    out.push_back({{"kind", k.kind},
                   {"points", k.points},
                   {"mean_abs_relative", k.mean_abs_relative},
                   {"mean_relative", k.mean_relative}});
  }
  return out;
}

}  // namespace racksim::app
