#include "app/studies/layout_kind_errors.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace racksim::app {

std::vector<LayoutKindErrors> errors_by_layout_kind(const std::vector<std::string>& kinds,
                                                    const std::vector<double>& predicted,
                                                    const std::vector<double>& measured) {
  std::map<std::string, LayoutKindErrors> sums;
  const size_t n = std::min({kinds.size(), predicted.size(), measured.size()});
  for (size_t i = 0; i < n; ++i) {
    if (!(predicted[i] > 0) || !(measured[i] > 0)) continue;
    const double error = predicted[i] / measured[i] - 1;
    LayoutKindErrors& k = sums[kinds[i]];
    k.kind = kinds[i];
    ++k.points;
    k.mean_abs_relative += std::abs(error);
    k.mean_relative += error;
  }
  std::vector<LayoutKindErrors> out;
  for (auto& [kind, k] : sums) {
    k.mean_abs_relative /= k.points;
    k.mean_relative /= k.points;
    out.push_back(k);
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
