#include "analysis/sweep_table.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/units.h"

namespace racksim::analysis {

std::string_view to_string(PointStatus status) {
  switch (status) {
    case PointStatus::kSimulated:
      return "ok";
    case PointStatus::kInvalid:
      return "invalid";
    case PointStatus::kDoesNotFit:
      return "does_not_fit";
    case PointStatus::kFailed:
      return "failed";
    case PointStatus::kPending:
      return "pending";
  }
  return "?";
}

void read_report_figures(const nlohmann::json& r, SweepPoint* p) {
  p->step_time_s = r.at("step_time_s").get<double>();
  p->tokens_per_s_per_gpu = r.at("tokens_per_s_per_gpu").get<double>();
  p->ms_per_1k_tokens = r.at("ms_per_1k_tokens").get<double>();
  p->mfu_model = r.at("mfu").at("model").get<double>();
  p->mfu_hardware = r.at("mfu").at("hardware").get<double>();
  p->peak_memory_bytes = r.at("memory").at("peak_bytes").get<double>();
  p->capacity_bytes = r.at("memory").at("capacity_bytes").get<double>();
  const auto& b = r.at("breakdown_s");
  p->bubble_s = b.at("bubble").get<double>();
  p->exposed_comm_s = 0;
  for (const auto& [dim, seconds] : b.at("exposed_comm").items()) {
    p->exposed_comm_s += seconds.get<double>();
  }
}

std::vector<size_t> ranked_order(const std::vector<SweepPoint>& points) {
  std::vector<size_t> order(points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const bool sa = points[a].status == PointStatus::kSimulated;
    const bool sb = points[b].status == PointStatus::kSimulated;
    if (sa != sb) return sa;
    return sa && points[a].tokens_per_s_per_gpu > points[b].tokens_per_s_per_gpu;
  });
  return order;
}

namespace {

std::string column_name(const std::string& field) {
  const auto dot = field.rfind('.');
  return dot == std::string::npos ? field : field.substr(dot + 1);
}

// Each swept field's column is as wide as its name and its longest value (at least 8), so a long
// value (a list, a file name) does not shift the columns after it.
std::vector<size_t> field_widths(const std::vector<std::string>& fields,
                                 const std::vector<SweepPoint>& points) {
  std::vector<size_t> widths;
  for (const auto& f : fields) widths.push_back(std::max<size_t>(8, column_name(f).size()));
  for (const SweepPoint& p : points) {
    for (size_t i = 0; i < p.values.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], p.values[i].size());
    }
  }
  return widths;
}

}  // namespace

std::string sweep_table(const std::vector<std::string>& fields,
                        const std::vector<SweepPoint>& points) {
  const std::vector<size_t> widths = field_widths(fields, points);
  std::string head = fmt::format("{:>4}  {:<5}", "rank", "point");
  for (size_t i = 0; i < fields.size(); ++i)
    head += fmt::format(" {:>{}}", column_name(fields[i]), widths[i]);
  head += fmt::format(" {:>11} {:>9} {:>8} {:>8} {:>13} {:>10} {:>10}\n", "step (s)", "tok/s/GPU",
                      "MFU A %", "MFU B %", "peak mem GB", "bubble s", "exp.comm s");
  std::string out = head;
  int rank = 0;
  std::string skipped;
  for (size_t i : ranked_order(points)) {
    const SweepPoint& p = points[i];
    std::string values;
    for (size_t v = 0; v < p.values.size(); ++v)
      values += fmt::format(" {:>{}}", p.values[v], v < widths.size() ? widths[v] : 8);
    if (p.status != PointStatus::kSimulated) {
      skipped += fmt::format("  {:<5}{}  {}: {}\n", p.id, values, to_string(p.status), p.reason);
      continue;
    }
    out += fmt::format(
        "{:>4}  {:<5}{} {:>11.4f} {:>9.1f} {:>8.2f} {:>8.2f} {:>13.1f} {:>10.4f} {:>10.4f}\n",
        ++rank, p.id, values, p.step_time_s, p.tokens_per_s_per_gpu, 100 * p.mfu_model,
        100 * p.mfu_hardware, p.peak_memory_bytes / units::kGB, p.bubble_s, p.exposed_comm_s);
  }
  if (!skipped.empty()) out += "\nnot simulated:\n" + skipped;
  return out;
}

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string sweep_csv(const std::vector<std::string>& fields,
                      const std::vector<SweepPoint>& points) {
  std::string out = "rank,point";
  for (const auto& f : fields) out += "," + csv_field(f);
  out +=
      ",status,step_time_s,tokens_per_s_per_gpu,ms_per_1k_tokens,mfu_model,mfu_hardware,"
      "peak_memory_bytes,capacity_bytes,bubble_s,exposed_comm_s,reason\n";
  int rank = 0;
  for (size_t i : ranked_order(points)) {
    const SweepPoint& p = points[i];
    const bool ok = p.status == PointStatus::kSimulated;
    out += ok ? std::to_string(++rank) : std::string();
    out += "," + p.id;
    for (const auto& v : p.values) out += "," + csv_field(v);
    out += fmt::format(",{}", to_string(p.status));
    if (ok) {
      out += fmt::format(",{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g}",
                         p.step_time_s, p.tokens_per_s_per_gpu, p.ms_per_1k_tokens, p.mfu_model,
                         p.mfu_hardware, p.peak_memory_bytes, p.capacity_bytes, p.bubble_s,
                         p.exposed_comm_s);
    } else if (p.status == PointStatus::kDoesNotFit) {
      out += fmt::format(",,,,,,{:.6g},{:.6g},,", p.peak_memory_bytes, p.capacity_bytes);
    } else {
      out += ",,,,,,,,,";
    }
    out += "," + csv_field(p.reason) + "\n";
  }
  return out;
}

}  // namespace racksim::analysis
