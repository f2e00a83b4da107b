#include "app/topology_report.h"

#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>

#include "common/input_file.h"
#include "config/hardware_loader.h"
#include "config/scenario_loader.h"
#include "topologies/engine_config.h"
#include "topologies/graphviz.h"
#include "topologies/hardware_presets.h"
#include "topologies/platform.h"

namespace racksim::app {
namespace {

double gb(double bytes_per_s) {
  return bytes_per_s / 1e9;
}

std::string read_file(const std::string& path) {
  return read_input_file(path, "the scenario", {path, 0, 0}, "");
}

std::string nic_line(const topo::NicChoice& c) {
  return fmt::format("GPU {} (socket {}) -> {} ({} {:g} Gb/s, socket {}{})", c.gpu, c.socket, c.nic,
                     topo::to_string(c.link_layer), c.bits_per_s / 1e9, c.nic_socket,
                     c.sharing_gpus > 1 ? fmt::format(", shared by {} GPUs", c.sharing_gpus) : "");
}

nlohmann::ordered_json nics_json(const std::vector<topo::NicChoice>& nics) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const topo::NicChoice& c : nics) {
    out.push_back({{"gpu", c.gpu},
                   {"socket", c.socket},
                   {"nic", c.nic},
                   {"link_layer", std::string(topo::to_string(c.link_layer))},
                   {"gbit_per_s", c.bits_per_s / 1e9},
                   {"nic_socket", c.nic_socket},
                   {"sharing_gpus", c.sharing_gpus}});
  }
  return out;
}

// One line per tier: the block's GPUs and the bisection of its halves.
std::string tiers_text(const std::vector<topo::TierBisection>& tiers) {
  if (tiers.empty()) return "";
  std::string out = "bisection per tier (per direction, a block cut in halves):\n";
  for (const topo::TierBisection& t : tiers) {
    out += fmt::format("  {:<16}{:>6} GPUs {:>11.1f} GB/s (formula)", t.tier, t.gpus,
                       gb(t.formula_bytes_per_s));
    if (t.max_flow_bytes_per_s >= 0)
      out += fmt::format(", {:.1f} GB/s (max-flow)", gb(t.max_flow_bytes_per_s));
    out += "\n";
  }
  return out;
}

nlohmann::ordered_json tiers_json(const std::vector<topo::TierBisection>& tiers) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const topo::TierBisection& t : tiers) {
    out.push_back({{"tier", t.tier},
                   {"gpus", t.gpus},
                   {"formula_bytes_per_s", t.formula_bytes_per_s},
                   {"max_flow_bytes_per_s", t.max_flow_bytes_per_s >= 0
                                                ? nlohmann::ordered_json(t.max_flow_bytes_per_s)
                                                : nlohmann::ordered_json(nullptr)}});
  }
  return out;
}

double peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports KiB
}

}  // namespace

config::Hardware load_topology_hardware(const std::string& scenario_or_preset, int nodes,
                                        const std::vector<std::string>& overrides) {
  // --nodes is applied last, as if it were the last --set: it wins over the file and the preset.
  std::vector<std::string> assignments = overrides;
  if (nodes > 0) assignments.push_back(fmt::format("hardware.nodes={}", nodes));
  std::error_code error;
  if (!std::filesystem::is_regular_file(scenario_or_preset, error)) {
    if (!topo::hardware_preset(scenario_or_preset)) {
      std::string names;
      for (const std::string& n : topo::hardware_preset_names()) names += " " + n;
      throw InputError({"command line", 0, 0}, "",
                       fmt::format("'{}' is neither a scenario file nor a hardware preset; "
                                   "presets:{}",
                                   scenario_or_preset, names));
    }
    return config::load_hardware_preset(scenario_or_preset, 0, assignments).scenario.hardware();
  }
  config::SourceMap sources;
  config::Scenario scenario =
      config::parse_scenario_text(read_file(scenario_or_preset), scenario_or_preset, &sources);
  for (const std::string& assignment : assignments)
    config::apply_override(assignment, &scenario, &sources);
  config::resolve_presets(&scenario, sources);
  config::validate_hardware(scenario.hardware(), sources);
  return scenario.hardware();
}

std::string topology_text(const std::string& title, const topo::TopologySummary& s) {
  std::string out = fmt::format("# racksim topo: {}\n", title);
  out += fmt::format("{:<24}{} ({} node{} x {}, {} nodes)\n", "GPUs", s.gpus, s.nodes,
                     s.nodes == 1 ? "" : "s", s.gpus_per_node, s.node_kind);
  out += fmt::format("{:<24}{} GPUs per domain, {} domain{}\n", "scale-up domain",
                     s.scale_up_domain, s.scale_up_domains, s.scale_up_domains == 1 ? "" : "s");
  std::string counts;
  for (const auto& [kind, n] : s.counts)
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", kind, n);
  out += fmt::format("{:<24}{}\n", "vertices", counts);
  out += "per GPU, per direction (achievable):\n";
  out += fmt::format("  {:<22}{:.1f} GB/s", "scale-up", gb(s.scale_up_bytes_per_s));
  if (s.mesh_link_bytes_per_s > 0) {
    out += fmt::format(" over all links; {:.1f} GB/s to any one peer", gb(s.mesh_link_bytes_per_s));
  }
  if (s.nvls_bytes_per_s > 0)
    out += fmt::format(" (NVLS {:.1f} GB/s per port)", gb(s.nvls_bytes_per_s));
  out += "\n";
  out += fmt::format("  {:<22}{:.1f} GB/s\n", "NIC", gb(s.nic_bytes_per_s));
  out += fmt::format("  {:<22}{:.1f} GB/s\n", "host link (PCIe/C2C)", gb(s.pcie_bytes_per_s));
  if (s.sockets > 0) {
    out += fmt::format("{:<24}{} socket{} (NUMA nodes) per node", "host", s.sockets,
                       s.sockets == 1 ? "" : "s");
    if (s.host_memory_bytes > 0)
      out += fmt::format(", {:.0f} GB memory each", s.host_memory_bytes / 1e9);
    out += "\n";
  }
  if (!s.tiers.empty()) {
    out += "scale-out fabric (per direction):\n";
    for (const topo::TierSummary& t : s.tiers) {
      out += fmt::format("  {:<24}{:>6} links {:>11.1f} GB/s", t.name, t.links, gb(t.bytes_per_s));
      if (t.name.find("-> leaf") == std::string::npos)
        out += fmt::format("  ({:g}:1)", t.oversubscription);
      out += "\n";
    }
    out +=
        fmt::format("  {:<24}{:>18.1f} GB/s (formula)", "bisection", gb(s.bisection_bytes_per_s));
    if (s.bisection_max_flow_bytes_per_s >= 0) {
      out += fmt::format(", {:.1f} GB/s (max-flow)", gb(s.bisection_max_flow_bytes_per_s));
    }
    out += "\n";
    out += fmt::format("  {:<24}{:>18.1f} GB/s per node\n", "ring all-reduce bound",
                       gb(s.ring_scale_out_bytes_per_s));
  }
  out += tiers_text(s.bisection_tiers);
  if (!s.nics.empty()) {
    out += "NICs of node 0 (NCCL's choice):\n";
    for (const topo::NicChoice& c : s.nics) out += "  " + nic_line(c) + "\n";
  }
  if (!s.nics_what_if.empty()) {
    out += "NICs of node 0 with treat_all_nics_as_ib flipped:\n";
    for (const topo::NicChoice& c : s.nics_what_if) out += "  " + nic_line(c) + "\n";
    out += fmt::format("  ring all-reduce bound {:.1f} GB/s per node\n",
                       gb(s.ring_scale_out_what_if_bytes_per_s));
  }
  out += s.warnings.empty() ? "warnings: none\n" : "warnings:\n";
  for (const std::string& w : s.warnings) out += "  - " + w + "\n";
  return out;
}

nlohmann::ordered_json topology_json(const topo::TopologySummary& s) {
  nlohmann::ordered_json j;
  j["gpus"] = s.gpus;
  j["nodes"] = s.nodes;
  j["gpus_per_node"] = s.gpus_per_node;
  j["node_kind"] = s.node_kind;
  j["scale_up_domain"] = s.scale_up_domain;
  j["scale_up_domains"] = s.scale_up_domains;
  j["counts"] = s.counts;
  j["per_gpu_gb_per_s"] = {{"scale_up", gb(s.scale_up_bytes_per_s)},
                           {"mesh_link", gb(s.mesh_link_bytes_per_s)},
                           {"nvls_port", gb(s.nvls_bytes_per_s)},
                           {"nic", gb(s.nic_bytes_per_s)},
                           {"host_link", gb(s.pcie_bytes_per_s)}};
  j["host"] = {{"sockets", s.sockets}, {"memory_bytes_per_socket", s.host_memory_bytes}};
  nlohmann::ordered_json tiers = nlohmann::ordered_json::array();
  for (const topo::TierSummary& t : s.tiers) {
    tiers.push_back({{"name", t.name},
                     {"links", t.links},
                     {"gb_per_s", gb(t.bytes_per_s)},
                     {"oversubscription", t.oversubscription}});
  }
  j["fabric"] = {{"tiers", tiers},
                 {"bisection_gb_per_s", gb(s.bisection_bytes_per_s)},
                 {"bisection_max_flow_gb_per_s",
                  s.bisection_max_flow_bytes_per_s >= 0
                      ? nlohmann::ordered_json(gb(s.bisection_max_flow_bytes_per_s))
                      : nlohmann::ordered_json(nullptr)},
                 {"ring_all_reduce_bound_gb_per_s", gb(s.ring_scale_out_bytes_per_s)}};
  j["bisection_per_tier"] = tiers_json(s.bisection_tiers);
  j["nics"] = nics_json(s.nics);
  if (!s.nics_what_if.empty()) {
    j["nic_what_if"] = {
        {"nics", nics_json(s.nics_what_if)},
        {"ring_all_reduce_bound_gb_per_s", gb(s.ring_scale_out_what_if_bytes_per_s)}};
  }
  j["warnings"] = s.warnings;
  return j;
}

void write_topology_dot(const config::Hardware& hardware, const std::string& path,
                        size_t max_vertices) {
  const topo::Topology topology = topo::build_cluster(hardware);
  const size_t vertices = boost::num_vertices(topology.graph);
  if (vertices > max_vertices) {
    throw InputError({"command line", 0, 0}, "--dot",
                     fmt::format("the graph has {} vertices, more than the {} a drawing can show; "
                                 "use fewer --nodes",
                                 vertices, max_vertices));
  }
  std::ofstream file(path);
  if (!file)
    throw InputError({"command line", 0, 0}, "--dot", fmt::format("cannot write {}", path));
  topo::write_dot(file, topology);
}

PlatformBuildFigures measure_platform_build(const config::Hardware& hardware) {
  using Clock = std::chrono::steady_clock;
  PlatformBuildFigures f;
  const auto start = Clock::now();
  const topo::Topology topology = topo::build_cluster(hardware);
  const auto graph_done = Clock::now();
  int argc = 1;
  char name[] = "racksim";
  char* argv[] = {name, nullptr};
  simgrid::s4u::Engine engine(&argc, argv);
  topo::configure_engine_for_gpus();
  const auto platform = topo::build_platform(topology, hardware.gpu().bf16_flops_per_s());
  const auto platform_done = Clock::now();
  f.gpus = static_cast<int>(topology.num_gpus());
  f.vertices = boost::num_vertices(topology.graph);
  f.edges = boost::num_edges(topology.graph);
  f.graph_s = std::chrono::duration<double>(graph_done - start).count();
  f.platform_s = std::chrono::duration<double>(platform_done - graph_done).count();
  f.peak_rss_bytes = peak_rss_bytes();
  return f;
}

std::string platform_build_text(const PlatformBuildFigures& f) {
  return fmt::format(
      "platform build: {} GPUs, {} vertices, {} links: graph {:.2f} s, SimGrid platform {:.2f} s, "
      "total {:.2f} s, peak RSS {:.0f} MB\n",
      f.gpus, f.vertices, f.edges, f.graph_s, f.platform_s, f.graph_s + f.platform_s,
      f.peak_rss_bytes / 1e6);
}

}  // namespace racksim::app
