// nccl-tests-style results of a collective benchmark: time, algorithm bandwidth and bus
// bandwidth per size. algbw = bytes / time; busbw = algbw x 2(n-1)/n for all-reduce and
// x (n-1)/n for all-gather, reduce-scatter and all-to-all (nccl-tests' convention), so that
// busbw can be compared with the link bandwidth whatever the rank count.
//
// NVLS all-reduce keeps nccl-tests' 2(n-1)/n (the published ~480 GB/s on DGX H100 is algbw
// ~275 x 14/8), but each GPU port then carries only (n+1)/n x the buffer instead of 2(n-1)/n:
// busbw = 2(n-1)/(n+1) x the port rate. `port_bytes_per_s` is what each port carried.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/event_graph.h"
#include "sim/engine.h"

namespace racksim::analysis {

struct CollectiveRow {
  double bytes = 0;
  double time_s = 0;
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
  double port_bytes_per_s = 0;  // algbw x port_traffic_factor
  sim::Algorithm algorithm = sim::Algorithm::kRing;
  bool measured = false;  // timed from hardware.collectives.measured_table, not `algorithm`
};

double bus_bandwidth_factor(CollectiveKind kind, uint32_t ranks);

// Bytes each member's port sends per byte of buffer: 2(n-1)/n for a ring all-reduce, (n+1)/n
// for NVLS, (n-1)/n for all-gather, reduce-scatter and all-to-all.
double port_traffic_factor(CollectiveKind kind, uint32_t ranks, sim::Algorithm algorithm);

// One row per collective instance of the graph's first communicator, in issue order: the time
// from the last member's arrival to the last member's completion.
std::vector<CollectiveRow> collective_rows(const EventGraph& graph, const sim::SimResult& result,
                                           sim::Algorithm algorithm = sim::Algorithm::kRing);

std::string collective_table_text(const std::vector<CollectiveRow>& rows);
nlohmann::ordered_json collective_table_json(const std::vector<CollectiveRow>& rows);

}  // namespace racksim::analysis
