// nccl-tests-style results of a collective benchmark: time, algorithm bandwidth and bus
// bandwidth per size. algbw = bytes / time; busbw = algbw x 2(n-1)/n for all-reduce and
// x (n-1)/n for all-gather, reduce-scatter and all-to-all (nccl-tests' convention), so that
// busbw can be compared with the link bandwidth whatever the rank count.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine.h"
#include "workloads/event_graph.h"

namespace racksim::analysis {

struct CollectiveRow {
  double bytes = 0;
  double time_s = 0;
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
};

double bus_bandwidth_factor(CollectiveKind kind, uint32_t ranks);

// One row per collective instance of the graph's first communicator, in issue order: the time
// from the last member's arrival to the last member's completion.
std::vector<CollectiveRow> collective_rows(const EventGraph& graph, const sim::SimResult& result);

std::string collective_table_text(const std::vector<CollectiveRow>& rows);
nlohmann::ordered_json collective_table_json(const std::vector<CollectiveRow>& rows);

}  // namespace racksim::analysis
