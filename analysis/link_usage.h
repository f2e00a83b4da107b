// Which links of the cluster carried the step's traffic, and how busy they were.
//
// The engine logs bytes and busy intervals per (source rank, destination rank) pair
// (sim/flow_log.h); routes are deterministic, so mapping each pair to the links of its route
// (topologies/routing.h) gives, per link and direction, the bytes carried and the time during
// which at least one flow crossed it (the union of the pairs' busy intervals).
#pragma once

#include <string>
#include <vector>

#include "sim/flow_log.h"
#include "topologies/topology_graph.h"

namespace racksim::analysis {

struct LinkUsage {
  std::string name;  // "n0.gpu3 -> n0.nvswitch": the direction it was crossed in
  std::string link_class;
  double bytes = 0;
  double busy_s = 0;         // time with at least one flow on the link
  double busy_fraction = 0;  // busy_s / step time
  double capacity_bytes_per_s = 0;
  double mean_utilisation = 0;  // bytes / (capacity x step time)
};

struct LinkSummary {
  std::vector<LinkUsage> top;  // the busiest links, by busy fraction then bytes
  size_t links_used = 0;       // directed links that carried anything
  double resolution_s = 0;     // busy intervals closer than this were merged (0: exact)
};

// `rank_to_gpu[r]` is the GPU rank r ran on; keeps the `top_n` busiest directed links.
LinkSummary link_usage(const topo::Topology& topology, const std::vector<uint32_t>& rank_to_gpu,
                       const std::vector<sim::PairTraffic>& traffic, double resolution_s,
                       double step_time_s, size_t top_n);

// Sets each link's busy fraction and mean utilisation for a step of `step_time_s`, orders the
// links by busy fraction then bytes, and keeps the `top_n` first.
void keep_busiest(LinkSummary* summary, double step_time_s, size_t top_n);

}  // namespace racksim::analysis
