// `racksim replay`: a recorded Chakra or Kineto (PyTorch profiler) trace simulated on a cluster
// built from a hardware preset, or on a ring of GPUs (the topology of ASTRA-sim's ring examples).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/kineto_report.h"
#include "analysis/trace_report.h"
#include "app/sim_estimate.h"
#include "config/scenario_loader.h"
#include "proto/scenario.pb.h"
#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/cluster_spec.h"
#include "traces/chakra_reader.h"

namespace racksim::app {

// kSwitch: N GPUs behind one switch (topologies/switch_topology.h).
enum class TraceTopology { kCluster, kRing, kSwitch };

struct TraceReplayRequest {
  std::string trace;  // prefix of <prefix>.<rank>.et files, or one file
  // Every trace argument (Kineto: files, directories, globs); empty: just `trace`.
  std::vector<std::string> traces;
  int64_t step = -1;  // Kineto: ProfilerStep number (-1: the last one)
  std::string hardware_preset = "dgx-h100";
  int nodes = 0;                       // 0: as many nodes as the ranks need
  std::vector<std::string> overrides;  // "hardware.x=v", as `racksim run --set`
  TraceTopology topology = TraceTopology::kCluster;
  int ring_gpus = 0;                    // 0: one per rank
  int switch_gpus = 0;                  // 0: one per rank
  double ring_link_bytes_per_s = 50e9;  // ring and switch links
  double ring_link_latency_s = 500e-9;
  chakra::ComputeSource compute = chakra::ComputeSource::kRecorded;
  std::string mapping_file;  // one GPU index per line, rank 0 first; empty: rank r on GPU r
  int expected_ranks = -1;   // Kineto: with one file, > 1 replicates it on that many ranks
  config::Simulation::Fidelity fidelity = config::Simulation::FULL;
  SimFeedback feedback;  // progress on long replays, the FULL-takes-long note
};

struct TraceReplay {
  chakra::ChakraTrace trace;
  sim::SimResult result;
  analysis::TraceReport report;
  std::optional<analysis::KinetoComparison> kineto;  // Kineto traces: recorded vs simulated
  double read_wall_s = 0;  // wall-clock time reading the trace (the simulation's is in report)
};

// Reads the trace, builds the platform, simulates (once per process: SimGrid). Throws
// InputError for bad input: the trace, the hardware overrides, the ring, the mapping.
TraceReplay replay_trace(const TraceReplayRequest& request);

// The hardware section of a preset with `nodes` and the overrides applied, resolved and
// checked as `racksim run` does (errors name --set or the preset), with its measured collective
// table read (config::read_measured_table).
config::LoadedScenario load_replay_hardware(const std::string& preset, int nodes,
                                            const std::vector<std::string>& overrides);
// Its hardware section alone (the measured table is not read).
config::Hardware resolve_hardware(const std::string& preset, int nodes,
                                  const std::vector<std::string>& overrides);

// A replay's hardware resolved once (from resolve_hardware's checked section): the cluster to
// build, the compute model that times modelled kernels, and the engine's options.
struct ReplayHardware {
  topo::ClusterSpec cluster;
  sim::ComputeModel compute;
  sim::SimOptions engine;  // collectives as the hardware says; fidelity FULL until the run sets it
  double bf16_flops_per_gpu = 0;  // the report's peak
};

ReplayHardware resolve_replay_hardware(const config::LoadedScenario& loaded);

// Rank -> GPU from a mapping file: one GPU index per line for ranks 0, 1, ... in order; blank
// lines and '#' comments are skipped. Throws InputError naming the file and line when there
// are not exactly `ranks` entries, an index is not below `gpus`, or two ranks share a GPU.
std::vector<uint32_t> read_rank_mapping(const std::string& path, uint32_t ranks, uint32_t gpus);

}  // namespace racksim::app
