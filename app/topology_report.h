// `racksim topo`: what a cluster is made of, as text or JSON, its Graphviz drawing, and how
// long building it (and its SimGrid platform) takes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "proto/scenario.pb.h"
#include "topologies/topology_summary.h"

namespace racksim::app {

// The hardware of a scenario file, or of a preset by name, with `nodes` (when > 0) and the
// `--set` overrides applied, resolved and checked. Throws InputError.
config::Hardware load_topology_hardware(const std::string& scenario_or_preset, int nodes,
                                        const std::vector<std::string>& overrides);

std::string topology_text(const std::string& title, const topo::TopologySummary& summary);
nlohmann::ordered_json topology_json(const topo::TopologySummary& summary);

// Writes the cluster graph as Graphviz DOT to `path`. Refuses (InputError) graphs of more than
// `max_vertices` vertices, which no one can read as a drawing.
void write_topology_dot(const config::Hardware& hardware, const std::string& path,
                        size_t max_vertices = 2000);

struct PlatformBuildFigures {
  int gpus = 0;
  size_t vertices = 0;
  size_t edges = 0;
  double graph_s = 0;         // the Boost.Graph cluster and NIC selection
  double platform_s = 0;      // the SimGrid hosts, links and routing zone
  double peak_rss_bytes = 0;  // of this process, after both
};

// Builds the cluster graph and its SimGrid platform in this process and measures them (the
// process's one SimGrid engine: call once, and run nothing else after it).
PlatformBuildFigures measure_platform_build(const config::Hardware& hardware);
std::string platform_build_text(const PlatformBuildFigures& figures);

}  // namespace racksim::app
