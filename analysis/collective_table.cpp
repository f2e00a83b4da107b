#include "analysis/collective_table.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace racksim::analysis {

double bus_bandwidth_factor(CollectiveKind kind, uint32_t ranks) {
  const double n = ranks;
  if (ranks <= 1) return 1;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2 * (n - 1) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return (n - 1) / n;
    default:
      return 1;
  }
}

double port_traffic_factor(CollectiveKind kind, uint32_t ranks, sim::Algorithm algorithm) {
  const double n = ranks;
  if (kind == CollectiveKind::kAllReduce && algorithm == sim::Algorithm::kNvls && ranks > 1) {
    return (n + 1) / n;
  }
  return bus_bandwidth_factor(kind, ranks);
}

std::vector<CollectiveRow> collective_rows(const EventGraph& graph, const sim::SimResult& result,
                                           sim::Algorithm algorithm) {
  struct Span {
    double bytes = 0;
    double last_arrival = 0;
    double last_end = 0;
    CollectiveKind kind = CollectiveKind::kAllReduce;
  };
  std::map<uint32_t, Span> spans;  // by sequence number on communicator 0
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.kind != OpKind::kCollective || op.peer != 0) continue;
    Span& s = spans[op.tag];
    s.bytes = op.amount;
    s.kind = op.collective;
    s.last_arrival = std::max(s.last_arrival, result.timing[id].start_s);
    s.last_end = std::max(s.last_end, result.timing[id].end_s);
  }
  const uint32_t ranks =
      graph.num_communicators() > 0 ? static_cast<uint32_t>(graph.communicator(0).size()) : 0;
  std::vector<CollectiveRow> rows;
  for (const auto& [seq, s] : spans) {
    CollectiveRow row;
    row.bytes = s.bytes;
    row.time_s = s.last_end - s.last_arrival;
    row.algbw_bytes_per_s = row.time_s > 0 ? row.bytes / row.time_s : 0;
    row.busbw_bytes_per_s = row.algbw_bytes_per_s * bus_bandwidth_factor(s.kind, ranks);
    row.port_bytes_per_s = row.algbw_bytes_per_s * port_traffic_factor(s.kind, ranks, algorithm);
    row.algorithm = algorithm;
    row.measured = result.measured_table_collectives > 0;
    rows.push_back(row);
  }
  return rows;
}

namespace {

// A collective timed from a measured table ran no algorithm of racksim's.
std::string_view algorithm_name(const CollectiveRow& row) {
  return row.measured ? "measured" : sim::to_string(row.algorithm);
}

}  // namespace

std::string collective_table_text(const std::vector<CollectiveRow>& rows) {
  std::string out = fmt::format("#{:>15} {:>12} {:>12} {:>12} {:>12} {:>8}\n", "size (B)",
                                "time (us)", "algbw (GB/s)", "busbw (GB/s)", "port (GB/s)", "algo");
  for (const auto& r : rows) {
    out += fmt::format(" {:>15.0f} {:>12.2f} {:>12.2f} {:>12.2f} {:>12.2f} {:>8}\n", r.bytes,
                       r.time_s * 1e6, r.algbw_bytes_per_s / 1e9, r.busbw_bytes_per_s / 1e9,
                       r.port_bytes_per_s / 1e9, algorithm_name(r));
  }
  return out;
}

nlohmann::ordered_json collective_table_json(const std::vector<CollectiveRow>& rows) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    j.push_back({{"bytes", r.bytes},
                 {"time_us", r.time_s * 1e6},
                 {"algbw_gb_per_s", r.algbw_bytes_per_s / 1e9},
                 {"busbw_gb_per_s", r.busbw_bytes_per_s / 1e9},
                 {"port_gb_per_s", r.port_bytes_per_s / 1e9},
                 {"algorithm", std::string(algorithm_name(r))}});
  }
  return j;
}

}  // namespace racksim::analysis
