#include "sim/analytic_model.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace racksim::sim {

FabricView::FabricView(const topo::Topology& topology, topo::Router& router,
                       std::vector<uint32_t> rank_to_gpu)
    : topology_(topology), router_(router), rank_to_gpu_(std::move(rank_to_gpu)) {}

const std::vector<topo::Hop>& FabricView::route(RankId from, RankId to) {
  return router_.route(topology_.gpus[rank_to_gpu_[from]], topology_.gpus[rank_to_gpu_[to]]);
}

const std::vector<topo::Hop>& FabricView::copy_route(RankId rank, uint32_t socket) {
  const uint32_t gpu = rank_to_gpu_[rank];
  const int numa_node = topology_.node_of_gpu(gpu) * topology_.sockets_per_node() + socket;
  return router_.route(topology_.gpus[gpu], topology_.cpus[numa_node]);
}

double FabricView::bytes_per_s(DirectedLink link) const {
  return topology_.graph[topology_.edges[link / 2]].bytes_per_s;
}

LinearCost analytic_cost(const CollectivePlan& unit_plan, const std::vector<RankId>& member_ranks,
                         FabricView& fabric) {
  LinearCost cost;
  std::unordered_map<DirectedLink, double> load;  // bytes per link in the phase
  std::vector<Transfer> sends;
  const auto members = static_cast<uint32_t>(member_ranks.size());
  // Alike phases cost the same: cost the first, count it num_phases times.
  const int phases =
      unit_plan.phases_alike() ? std::min(1, unit_plan.num_phases()) : unit_plan.num_phases();
  const double repeat = unit_plan.phases_alike() ? unit_plan.num_phases() : 1;
  std::vector<std::map<uint32_t, double>> per_peer(members);
  for (int phase = 0; phase < phases; ++phase) {
    load.clear();
    double latency = 0;
    double capped = 0;  // seconds per byte of the slowest rate-capped transfer
    for (uint32_t m = 0; m < members; ++m) {
      sends.clear();
      unit_plan.sends(m, phase, &sends);
      for (const Transfer& t : sends) {
        const RankId from = member_ranks[m];
        const RankId to = member_ranks[t.to];
        if (t.bytes <= 0 || fabric.gpu_of(from) == fabric.gpu_of(to)) continue;
        const auto& hops = fabric.route(from, to);
        latency = std::max(latency, fabric.latency_s(hops));
        if (t.max_bytes_per_s > 0) capped = std::max(capped, t.bytes / t.max_bytes_per_s);
        per_peer[m][t.to] += repeat * t.bytes;
        for (const topo::Hop& hop : hops) {
          const DirectedLink link = directed_link(hop);
          load[link] += t.bytes;
          cost.links.push_back(link);
        }
      }
    }
    double busiest = capped;
    for (const auto& [link, bytes] : load)
      busiest = std::max(busiest, bytes / fabric.bytes_per_s(link));
    cost.latency_s += repeat * latency;
    cost.seconds_per_byte += repeat * busiest;
    std::sort(cost.links.begin(), cost.links.end());
    cost.links.erase(std::unique(cost.links.begin(), cost.links.end()), cost.links.end());
  }
  cost.sends.resize(members);
  for (uint32_t m = 0; m < members; ++m) {
    for (const auto& [to, bytes] : per_peer[m]) cost.sends[m].push_back({to, bytes});
  }
  return cost;
}

const LinearCost* AnalyticCosts::find(CommId comm, CollectiveKind kind, uint32_t weights) const {
  const auto it = costs_.find({comm, static_cast<int>(kind), weights});
  return it == costs_.end() ? nullptr : &it->second;
}

const LinearCost& AnalyticCosts::insert(CommId comm, CollectiveKind kind, uint32_t weights,
                                        LinearCost cost) {
  return costs_[{comm, static_cast<int>(kind), weights}] = std::move(cost);
}

void LinkActivity::add_flow(const std::vector<topo::Hop>& hops, int delta) {
  for (const topo::Hop& hop : hops) flows_[directed_link(hop)] += delta;
}

bool LinkActivity::idle(const std::vector<DirectedLink>& links, double now_s) const {
  return std::none_of(links.begin(), links.end(),
                      [&](DirectedLink l) { return flows_[l] > 0 || busy_until_s_[l] > now_s; });
}

void LinkActivity::reserve(const std::vector<DirectedLink>& links, double until_s) {
  for (DirectedLink l : links) busy_until_s_[l] = std::max(busy_until_s_[l], until_s);
}

}  // namespace racksim::sim
