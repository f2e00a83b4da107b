// The energy of one simulated training step, read off the recorded timeline.
//
// Why a ledger and not SimGrid's host energy plugin: the plugin integrates a host's power over
// its CPU load, but a rank's GPU host in racksim runs compute as Execs while its collectives,
// sends and copies are flows that do not load the host, and folded or analytically timed
// collectives create no activity at all. The timeline (sim::SimResult::timing) has every
// operation's start and end whatever the fidelity, so the ledger integrates power over it:
//   - a GPU is busy while a kernel of its compute stream runs (forward, backward, recompute,
//     optimizer on the GPU);
//   - communicating while only collectives, sends, receives or host copies run on it (exposed
//     communication, and a collective's wait for its last member: NCCL kernels spin);
//   - idle otherwise (the pipeline bubble, the tail while the CPU optimizer runs).
// Each state has its own power (hardware.power); the rest of the cluster (CPU sockets,
// NVSwitch chips, NICs, scale-out switches, the node's other parts) draws a constant power for
// the whole step (switches: their ports this cluster uses). Facility energy is IT energy times the
// PUE. Units: seconds, watts, joules.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "graph/event_graph.h"
#include "proto/scenario.pb.h"
#include "sim/engine.h"
#include "topologies/topology_graph.h"

namespace racksim::analysis {

// hardware.power, resolved (watts; the loader checked them: >= 0, pue >= 1).
struct PowerModel {
  double gpu_busy_w = 0;
  double gpu_comm_w = 0;
  double gpu_idle_w = 0;
  double cpu_w = 0;  // per socket
  double nvswitch_w = 0;
  double nvswitch_chips_per_node = 0;
  double nic_w = 0;
  double switch_w = 0;
  double node_other_w = 0;
  double pue = 1;
  std::string source;

  static PowerModel from_hardware(const config::Hardware& hardware);
};

constexpr int kDefaultSwitchRadix = 64;  // a Quantum-2 (NDR) switch

// What draws power besides the GPUs, counted on the built cluster.
struct ClusterParts {
  int gpus = 0;
  int nodes = 0;
  int cpu_sockets = 0;
  int nics = 0;
  // Scale-out switches, in whole switches' worth of ports: the fabric is sized to the cluster
  // (a non-blocking two-tier fat tree: 3 switch ports per NIC, fewer with oversubscription),
  // and a switch has hardware.scale_out.switch_radix ports (64 when unset).
  double switches = 0;
  double nvswitch_chips = 0;
};
ClusterParts cluster_parts(const topo::Topology& topology, const PowerModel& power);

// GPU-seconds of the whole cluster in each state over [0, step_time_s]. Ranks without
// operations in the graph (mirrored by symmetry folding) count as the average simulated rank;
// GPUs beyond the graph's ranks are idle.
struct GpuStateSeconds {
  double busy_s = 0;
  double comm_s = 0;
  double idle_s = 0;
  double total_s() const { return busy_s + comm_s + idle_s; }
};
GpuStateSeconds gpu_state_seconds(const EventGraph& graph, const sim::SimResult& result,
                                  double step_time_s, int gpus);

struct StepEnergy {
  double step_time_s = 0;
  double tokens_per_step = 0;
  ClusterParts parts;
  GpuStateSeconds gpu_seconds;
  double gpu_busy_j = 0;
  double gpu_comm_j = 0;
  double gpu_idle_j = 0;
  double cpu_j = 0;
  double nvswitch_j = 0;
  double nic_j = 0;
  double switch_j = 0;
  double node_other_j = 0;
  double pue = 1;
  std::string source;

  double gpu_j() const { return gpu_busy_j + gpu_comm_j + gpu_idle_j; }
  double it_j() const;
  double facility_j() const { return it_j() * pue; }
  double j_per_token() const { return tokens_per_step > 0 ? facility_j() / tokens_per_step : 0; }
  double gpu_average_w() const;       // GPU energy / (GPUs x step time)
  double facility_average_w() const;  // facility energy / step time
};

StepEnergy step_energy(const PowerModel& power, const ClusterParts& parts,
                       const GpuStateSeconds& gpu_seconds, double step_time_s,
                       double tokens_per_step);

nlohmann::ordered_json energy_json(const StepEnergy& energy);
std::string energy_text(const StepEnergy& energy);

}  // namespace racksim::analysis
