// The simulation engine: replays an event graph on a SimGrid platform built from a topology.
//
// One SimGrid actor per (rank, stream) walks that stream's operations in order. An operation
// starts when its stream reaches it and its dependencies are done. Compute runs as an Exec on
// the rank's GPU host (roofline duration from the ComputeModel); sends are direct host-to-host
// flows; a collective starts when every member has reached it and then runs its plan's phases
// as flows (sim/collective_plan.h). Activities are created as the replay goes (never the whole
// graph up front, which is quadratic in SimGrid 3.32).
//
// SimGrid runs one simulation per process: call simulate() once per process.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/event_graph.h"
#include "proto/scenario.pb.h"
#include "sim/collective_plan.h"
#include "sim/compute_model.h"
#include "sim/flow_log.h"
#include "topologies/measured_collectives.h"
#include "topologies/topology_graph.h"

namespace racksim::sim {

// The error budget of the shortcut fidelities against FULL's step time (docs/speed.md; the
// default fidelity, config/scenario_loader.h, is held to it by
// tests/cli/cli_default_fidelity_test.cpp).
inline constexpr double kDefaultErrorBudget = 0.005;

// The relative error of the step time against FULL that `fidelity` is held to: 0 for FULL,
// kDefaultErrorBudget for the shortcuts (measured well inside it; README "Fidelity levels").
double fidelity_error_budget(config::Simulation::Fidelity fidelity);

// Whether a graph simulated at `fidelity` may carry ring attention's hops as one transfer
// (AGGREGATED and coarser: ANALYTIC, AUTO).
bool merges_ring_hops(config::Simulation::Fidelity fidelity);
// How far a simulation is, for a progress line (app/sim_estimate.h).
struct SimProgress {
  uint64_t done_ops = 0;
  uint64_t total_ops = 0;
  double wall_s = 0;  // since the replay started
  double sim_s = 0;   // SimGrid's clock
};

struct SimOptions {
  config::Simulation::Fidelity fidelity = config::Simulation::FULL;  // what tests pin
  double collective_base_latency_s = 0;
  // hardware.collectives.host_skew_s: a collective after a host-bound kernel waits for the
  // last of its members' hosts (sim/host_skew.h).
  double collective_host_skew_s = 0;
  Algorithm algorithm = Algorithm::kAuto;  // hardware.collectives.algorithm
  // hardware.collectives.measured_table: collectives inside one scale-up domain that it holds
  // take its times (analytic fidelities) or last at least that long (flows). Empty: none.
  topo::MeasuredCollectives measured_collectives;
  // Symmetry folding: when not empty, only ranks r with simulated_ranks[r] have operations in
  // the graph; the others mirror them. A collective with mirrored members runs ANALYTIC on
  // the real fabric (every member's transfers loaded on the links), the mirrors being
  // assumed to arrive when the simulated members do.
  std::vector<bool> simulated_ranks;
  // What-if faults (topologies/faults.h), per rank: a factor on the duration of its GPU kernels
  // (a straggler) and of its host work (a slow host). Empty: 1 for every rank.
  std::vector<double> gpu_time_factor;
  std::vector<double> host_time_factor;
  // Called about every progress_every_s of wall-clock time while the replay runs (not at all
  // when empty); what it prints is the caller's, never part of the report.
  std::function<void(const SimProgress&)> progress;
  double progress_every_s = 1;
};

// The engine's algorithm for a scenario's hardware.collectives.algorithm.
Algorithm to_algorithm(config::CollectiveTuning::Algorithm algorithm);

// The options a scenario's hardware section asks for (fidelity stays FULL), with the measured
// collective table the loader read for it (config::LoadedScenario::measured_collectives; empty
// when the hardware names none). The engine opens no file.
SimOptions sim_options(const config::Hardware& hardware, topo::MeasuredCollectives measured);

// Where a communicator of ranks on `gpus` sits (scale-up domains, NVLS, mesh), as the engine
// sees it; with choose_algorithm it tells which algorithm a collective runs.
CommShape comm_shape(const topo::Topology& topology, const std::vector<uint32_t>& gpus);

struct OpTiming {
  // When the operation started: a compute kernel's launch, a collective's arrival of this
  // rank, a send's or recv's transfer start. -1 if it never ran.
  double start_s = -1;
  double end_s = -1;
};

// Collectives of one kind on one parallel dimension that ran one algorithm (the AUTO choice or
// the requested one where it applies: choose_algorithm).
struct AlgorithmUse {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CommDim dim = CommDim::kOther;
  Algorithm algorithm = Algorithm::kRing;
  uint64_t collectives = 0;  // instances run (each counted once, not per member)
  uint32_t max_members = 0;  // the largest communicator among them
};

struct SimResult {
  std::vector<OpTiming> timing;  // per operation
  // Per operation: the dependency whose completion made it ready (the last one to finish), or
  // kNoOp when it had none. For a recv, the matching send.
  std::vector<OpId> released_by;
  double makespan_s = 0;    // the last operation's end
  uint64_t activities = 0;  // SimGrid activities created (execs, flows, sleeps)
  uint64_t flows = 0;       // of which network flows
  double wall_s = 0;        // wall-clock time of the replay
  // The fidelity it ran at (SimOptions::fidelity), for the report.
  config::Simulation::Fidelity fidelity = config::Simulation::FULL;
  // Ranks that ran (SimOptions::simulated_ranks); the others mirror them (symmetry folding).
  uint32_t simulated_ranks = 0;
  // Collectives run from the analytic model (ANALYTIC, AUTO, folded) and with flows.
  uint64_t analytic_collectives = 0;
  uint64_t flow_collectives = 0;
  // Collectives timed from hardware.collectives.measured_table: analytic ones at the measured
  // time, or flows that last at least that long.
  uint64_t measured_table_collectives = 0;
  // Routes the platform computed (GPU/CPU pairs that communicated), against the ordered GPU
  // pairs an all-pairs table would hold.
  uint64_t routes_computed = 0;
  uint64_t gpu_pairs = 0;
  // What the network carried, per (source rank, destination rank) pair (sim/flow_log.h), and
  // the resolution of its busy intervals (0: exact).
  std::vector<PairTraffic> traffic;
  double traffic_resolution_s = 0;
  // Which algorithm the collectives ran, ordered by kind, dimension, algorithm. Collectives of
  // one member and barriers (nothing moves) are left out.
  std::vector<AlgorithmUse> algorithms;
};

// Replays `graph` with rank r on GPU rank_to_gpu[r] of `topology`. Throws std::runtime_error
// if the graph's communication does not match up or the replay deadlocks.
SimResult simulate(const EventGraph& graph, const topo::Topology& topology,
                   const std::vector<uint32_t>& rank_to_gpu, const ComputeModel& compute,
                   const SimOptions& options);

}  // namespace racksim::sim
