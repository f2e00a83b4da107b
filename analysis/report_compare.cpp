#include "analysis/report_compare.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

namespace racksim::analysis {

namespace {

// Noise, not prediction: differs between two runs of the same input.
bool ignored(const std::string& path) {
  return path == "sim.wall_s";
}

std::string item_key(const nlohmann::json& item, size_t index) {
  if (item.is_object()) {
    for (const char* key : {"name", "label", "link", "rank"}) {
      if (!item.contains(key)) continue;
      const auto& v = item.at(key);
      return v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  return std::to_string(index);
}

void flatten(const nlohmann::json& j, const std::string& path,
             std::vector<std::pair<std::string, double>>* out) {
  if (j.is_number() && !ignored(path)) {
    out->push_back({path, j.get<double>()});
  } else if (j.is_boolean()) {
    out->push_back({path, j.get<bool>() ? 1.0 : 0.0});
  } else if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      flatten(value, path.empty() ? key : path + "." + key, out);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      flatten(j[i], fmt::format("{}[{}]", path, item_key(j[i], i)), out);
    }
  }
}

std::string number(std::optional<double> v) {
  if (!v) return "-";
  return fmt::format("{:.6g}", *v);
}

}  // namespace

std::optional<double> ComparedField::relative() const {
  if (!a || !b || *a == 0) return std::nullopt;
  return (*b - *a) / std::abs(*a);
}

std::vector<ComparedField> compare_reports(const nlohmann::json& a, const nlohmann::json& b) {
  std::vector<std::pair<std::string, double>> fa, fb;
  flatten(a, "", &fa);
  flatten(b, "", &fb);
  std::vector<ComparedField> out;
  std::map<std::string, size_t> index;
  for (const auto& [path, value] : fa) {
    index[path] = out.size();
    out.push_back({path, value, std::nullopt});
  }
  for (const auto& [path, value] : fb) {
    if (auto it = index.find(path); it != index.end()) {
      out[it->second].b = value;
    } else {
      out.push_back({path, std::nullopt, value});
    }
  }
  return out;
}

std::string comparison_table(const std::vector<ComparedField>& fields, const std::string& name_a,
                             const std::string& name_b, bool changed_only) {
  size_t width = 5;
  for (const auto& f : fields) width = std::max(width, f.path.size());
  width = std::min<size_t>(width, 64);
  std::string out = fmt::format("A = {}\nB = {}\n\n{:<{}} {:>14} {:>14} {:>14} {:>9}\n", name_a,
                                name_b, "field", width, "A", "B", "B - A", "B/A - 1");
  for (const auto& f : fields) {
    if (changed_only && f.a && f.b && *f.a == *f.b) continue;
    const auto rel = f.relative();
    out += fmt::format("{:<{}} {:>14} {:>14} {:>14} {:>9}\n", f.path, width, number(f.a),
                       number(f.b), f.a && f.b ? fmt::format("{:+.6g}", f.difference()) : "-",
                       rel ? fmt::format("{:+.1f}%", 100 * *rel) : "-");
  }
  return out;
}

}  // namespace racksim::analysis
