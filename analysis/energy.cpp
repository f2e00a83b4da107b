#include "analysis/energy.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <boost/graph/adjacency_list.hpp>

namespace racksim::analysis {

namespace {

using Span = std::pair<double, double>;

// Length of the union of `spans` clipped to [0, limit].
double clipped_union_length(std::vector<Span> spans, double limit) {
  std::sort(spans.begin(), spans.end());
  double covered_to = 0;
  double length = 0;
  for (auto [from, to] : spans) {
    from = std::max(from, covered_to);
    to = std::min(to, limit);
    if (to > from) length += to - from;
    covered_to = std::max(covered_to, std::min(to, limit));
  }
  return length;
}

bool is_communication(OpKind kind) {
  return kind == OpKind::kCollective || kind == OpKind::kSend || kind == OpKind::kRecv ||
         kind == OpKind::kCopy;
}

}  // namespace

PowerModel PowerModel::from_hardware(const config::Hardware& hardware) {
  const config::Power& p = hardware.power();
  return {p.gpu_busy_w(),   p.gpu_comm_w(),
          p.gpu_idle_w(),   p.cpu_w(),
          p.nvswitch_w(),   p.nvswitch_chips_per_node(),
          p.nic_w(),        p.switch_w(),
          p.node_other_w(), p.has_pue() ? p.pue() : 1.0,
          p.source()};
}

// Switch ports a NIC takes in a fat tree sized to the cluster: its leaf port, the leaf's uplink
// share and the spine port it lands on (1 / oversubscription each), and with a third tier the
// spine's uplink and core port (divided by the pod oversubscription too).
double switch_ports_per_nic(const topo::FabricSpec& f) {
  double ports = 1 + 2 / f.oversubscription;
  if (f.tiers >= 3) ports += 2 / (f.oversubscription * f.pod_oversubscription);
  return ports;
}

ClusterParts cluster_parts(const topo::Topology& topology, const PowerModel& power) {
  ClusterParts parts;
  parts.gpus = static_cast<int>(topology.num_gpus());
  parts.nodes = topology.nodes;
  parts.nvswitch_chips = power.nvswitch_chips_per_node * topology.nodes;
  for (auto [it, end] = boost::vertices(topology.graph); it != end; ++it) {
    const topo::VertexKind kind = topology.graph[*it].kind;
    if (kind == topo::VertexKind::kCpu) ++parts.cpu_sockets;
    if (kind == topo::VertexKind::kNic) ++parts.nics;
  }
  // One node talks to no one over its NICs: no fabric to power.
  if (topology.nodes > 1) {
    const topo::FabricSpec& fabric = topology.spec.fabric;
    const int radix = fabric.switch_radix > 0 ? fabric.switch_radix : kDefaultSwitchRadix;
    parts.switches = parts.nics * switch_ports_per_nic(fabric) / radix;
  }
  return parts;
}

GpuStateSeconds gpu_state_seconds(const EventGraph& graph, const sim::SimResult& result,
                                  double step_time_s, int gpus) {
  std::vector<std::vector<Span>> busy(graph.num_ranks());
  std::vector<std::vector<Span>> active(graph.num_ranks());  // busy or communicating
  std::vector<bool> has_ops(graph.num_ranks(), false);
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    const sim::OpTiming& t = result.timing[id];
    has_ops[op.rank] = true;
    if (t.start_s < 0 || t.end_s <= t.start_s) continue;
    const bool on_gpu = graph.streams()[op.stream].kind == StreamKind::kCompute;
    if (op.kind == OpKind::kCompute && on_gpu) {
      busy[op.rank].emplace_back(t.start_s, t.end_s);
      active[op.rank].emplace_back(t.start_s, t.end_s);
    } else if (is_communication(op.kind)) {
      active[op.rank].emplace_back(t.start_s, t.end_s);
    }
  }
  GpuStateSeconds simulated;
  int simulated_ranks = 0;
  for (RankId r = 0; r < graph.num_ranks(); ++r) {
    if (!has_ops[r]) continue;
    ++simulated_ranks;
    const double b = clipped_union_length(std::move(busy[r]), step_time_s);
    const double a = clipped_union_length(std::move(active[r]), step_time_s);
    simulated.busy_s += b;
    simulated.comm_s += a - b;
    simulated.idle_s += step_time_s - a;
  }
  GpuStateSeconds total;
  if (simulated_ranks > 0) {
    const double scale = static_cast<double>(graph.num_ranks()) / simulated_ranks;
    total = {simulated.busy_s * scale, simulated.comm_s * scale, simulated.idle_s * scale};
  }
  const int unused = gpus - static_cast<int>(simulated_ranks > 0 ? graph.num_ranks() : 0);
  if (unused > 0) total.idle_s += unused * step_time_s;
  return total;
}

double StepEnergy::it_j() const {
  return gpu_j() + cpu_j + nvswitch_j + nic_j + switch_j + node_other_j;
}

double StepEnergy::gpu_average_w() const {
  const double gpu_s = step_time_s * parts.gpus;
  return gpu_s > 0 ? gpu_j() / gpu_s : 0;
}

double StepEnergy::facility_average_w() const {
  return step_time_s > 0 ? facility_j() / step_time_s : 0;
}

StepEnergy step_energy(const PowerModel& power, const ClusterParts& parts,
                       const GpuStateSeconds& gpu_seconds, double step_time_s,
                       double tokens_per_step) {
  StepEnergy e;
  e.step_time_s = step_time_s;
  e.tokens_per_step = tokens_per_step;
  e.parts = parts;
  e.gpu_seconds = gpu_seconds;
  e.gpu_busy_j = power.gpu_busy_w * gpu_seconds.busy_s;
  e.gpu_comm_j = power.gpu_comm_w * gpu_seconds.comm_s;
  e.gpu_idle_j = power.gpu_idle_w * gpu_seconds.idle_s;
  e.cpu_j = power.cpu_w * parts.cpu_sockets * step_time_s;
  e.nvswitch_j = power.nvswitch_w * parts.nvswitch_chips * step_time_s;
  e.nic_j = power.nic_w * parts.nics * step_time_s;
  e.switch_j = power.switch_w * parts.switches * step_time_s;
  e.node_other_j = power.node_other_w * parts.nodes * step_time_s;
  e.pue = power.pue;
  e.source = power.source;
  return e;
}

nlohmann::ordered_json energy_json(const StepEnergy& e) {
  nlohmann::ordered_json j;
  j["j_per_step"] = e.facility_j();
  j["it_j_per_step"] = e.it_j();
  j["j_per_token"] = e.j_per_token();
  j["gpu_average_w"] = e.gpu_average_w();
  j["facility_average_w"] = e.facility_average_w();
  j["pue"] = e.pue;
  j["by_component_j"] = {{"gpu_busy", e.gpu_busy_j},
                         {"gpu_comm", e.gpu_comm_j},
                         {"gpu_idle", e.gpu_idle_j},
                         {"cpu", e.cpu_j},
                         {"nvswitch", e.nvswitch_j},
                         {"nic", e.nic_j},
                         {"switch", e.switch_j},
                         {"node_other", e.node_other_j},
                         {"cooling_and_losses", e.facility_j() - e.it_j()}};
  j["gpu_seconds"] = {{"busy", e.gpu_seconds.busy_s},
                      {"comm", e.gpu_seconds.comm_s},
                      {"idle", e.gpu_seconds.idle_s}};
  j["parts"] = {{"gpus", e.parts.gpus},
                {"nodes", e.parts.nodes},
                {"cpu_sockets", e.parts.cpu_sockets},
                {"nics", e.parts.nics},
                {"switches", e.parts.switches},
                {"nvswitch_chips", e.parts.nvswitch_chips}};
  j["source"] = e.source;
  return j;
}

std::string energy_text(const StepEnergy& e) {
  const double gpu_s = e.gpu_seconds.total_s();
  auto share = [&](double s) { return gpu_s > 0 ? 100 * s / gpu_s : 0.0; };
  std::string out = fmt::format(
      "\nEnergy per step: {:.4g} kJ at the facility (IT {:.4g} kJ x PUE {:.2f}), {:.4g} J per "
      "token, {:.4g} kW average\n",
      e.facility_j() / 1e3, e.it_j() / 1e3, e.pue, e.j_per_token(), e.facility_average_w() / 1e3);
  out += fmt::format(
      "  GPUs {:.4g} kJ ({:.0f} W average per GPU): busy {:.1f} %, communicating {:.1f} %, idle "
      "{:.1f} % of GPU time\n",
      e.gpu_j() / 1e3, e.gpu_average_w(), share(e.gpu_seconds.busy_s), share(e.gpu_seconds.comm_s),
      share(e.gpu_seconds.idle_s));
  out += fmt::format(
      "  CPUs {:.4g} kJ, NVSwitches {:.4g} kJ, NICs {:.4g} kJ, switches {:.4g} kJ, rest of the "
      "nodes {:.4g} kJ\n",
      e.cpu_j / 1e3, e.nvswitch_j / 1e3, e.nic_j / 1e3, e.switch_j / 1e3, e.node_other_j / 1e3);
  return out;
}

}  // namespace racksim::analysis
