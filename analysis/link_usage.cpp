#include "analysis/link_usage.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "topologies/routing.h"

namespace racksim::analysis {

namespace {

// One direction of one edge: edge index x 2 + (forward ? 0 : 1).
uint64_t directed(const topo::Hop& hop) {
  return 2 * static_cast<uint64_t>(hop.edge) + (hop.forward ? 0 : 1);
}

double union_length(std::vector<sim::BusyInterval>& intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
  double total = 0, start = 0, end = -1;
  for (const auto& b : intervals) {
    if (b.start_s > end) {
      if (end > start) total += end - start;
      start = b.start_s;
      end = b.end_s;
    } else {
      end = std::max(end, b.end_s);
    }
  }
  if (end > start) total += end - start;
  return total;
}

LinkUsage describe(const topo::Topology& topology, uint64_t link) {
  const topo::EdgeId e = topology.edges[link / 2];
  const topo::Edge& edge = topology.graph[e];
  auto from = boost::source(e, topology.graph);
  auto to = boost::target(e, topology.graph);
  if (link % 2 == 1) std::swap(from, to);
  LinkUsage u;
  u.name = fmt::format("{} -> {}", topology.graph[from].name, topology.graph[to].name);
  u.link_class = std::string(topo::to_string(edge.link_class));
  u.capacity_bytes_per_s = edge.bytes_per_s;
  return u;
}

}  // namespace

LinkSummary link_usage(const topo::Topology& topology, const std::vector<uint32_t>& rank_to_gpu,
                       const std::vector<sim::PairTraffic>& traffic, double resolution_s,
                       double step_time_s, size_t top_n) {
  topo::Router router(topology);
  std::map<uint64_t, double> bytes;                  // directed link -> bytes
  std::map<uint64_t, std::vector<size_t>> pairs_on;  // directed link -> pairs
  for (size_t p = 0; p < traffic.size(); ++p) {
    const auto& pair = traffic[p];
    const auto& hops = router.route(topology.gpus[rank_to_gpu[pair.source]],
                                    topology.gpus[rank_to_gpu[pair.destination]]);
    for (const topo::Hop& hop : hops) {
      bytes[directed(hop)] += pair.bytes;
      pairs_on[directed(hop)].push_back(p);
    }
  }
  std::vector<LinkUsage> all;
  for (const auto& [link, pairs] : pairs_on) {
    std::vector<sim::BusyInterval> intervals;
    for (size_t p : pairs) {
      intervals.insert(intervals.end(), traffic[p].busy.begin(), traffic[p].busy.end());
    }
    LinkUsage u = describe(topology, link);
    u.bytes = bytes[link];
    u.busy_s = union_length(intervals);
    all.push_back(std::move(u));
  }
  LinkSummary summary;
  summary.links_used = all.size();
  summary.resolution_s = resolution_s;
  summary.top = std::move(all);
  keep_busiest(&summary, step_time_s, top_n);
  return summary;
}

void keep_busiest(LinkSummary* summary, double step_time_s, size_t top_n) {
  std::vector<LinkUsage>& links = summary->top;
  for (LinkUsage& u : links) {
    u.busy_fraction = step_time_s > 0 ? u.busy_s / step_time_s : 0;
    u.mean_utilisation = step_time_s > 0 ? u.bytes / (u.capacity_bytes_per_s * step_time_s) : 0;
  }
  std::stable_sort(links.begin(), links.end(), [](const LinkUsage& a, const LinkUsage& b) {
    return a.busy_fraction != b.busy_fraction ? a.busy_fraction > b.busy_fraction
                                              : a.bytes > b.bytes;
  });
  if (links.size() > top_n) links.resize(top_n);
}

}  // namespace racksim::analysis
