// `racksim collective`: an nccl-tests-style benchmark on a simulated cluster.
#pragma once

#include <string>
#include <vector>

#include "analysis/collective_table.h"
#include "proto/scenario.pb.h"
#include "topologies/measured_collectives.h"

namespace racksim::app {

struct CollectiveBenchRequest {
  config::Hardware hardware;                       // resolved (preset, nodes, overrides)
  topo::MeasuredCollectives measured_collectives;  // its measured table, read by the loader
  CollectiveKind kind = CollectiveKind::kAllReduce;
  uint32_t ranks = 8;  // on GPUs 0 .. ranks-1
  double min_bytes = 8;
  double max_bytes = 1 << 20;
  config::Simulation::Fidelity fidelity = config::Simulation::FULL;
};

// Parses "8", "64K", "1M", "8G" (K, M, G, T are powers of 1024, as in nccl-tests). Throws
// InputError naming `option`.
double parse_byte_size(const std::string& text, const std::string& option);

// Parses all_reduce | all_gather | reduce_scatter | all_to_all (also with dashes).
CollectiveKind parse_collective_kind(const std::string& text);

std::vector<analysis::CollectiveRow> run_collective_bench(const CollectiveBenchRequest& request);

}  // namespace racksim::app
