// Feedback on long simulations, outside the report: a progress line on stderr with an
// estimate of the time left, and before a FULL-fidelity run that would take more than a few
// minutes a hint to AGGREGATED or ANALYTIC with the figure (issue 18: a 1,024-rank FULL replay
// ran 40 minutes unfinished where ANALYTIC took 5 s with the same step time).
//
// The estimate counts what FULL replays as SimGrid activities: the flows each member of every
// collective sends under the algorithm it runs on the cluster (a ring step per channel, one
// NVLS flow, a flow per peer), one per send and copy, and the operations themselves, at costs
// per activity measured on the reference machine (docs/replay.md, "Long replays and runs").
// It is a rough figure: SimGrid's cost per flow grows with the flows in flight.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/event_graph.h"
#include "proto/scenario.pb.h"
#include "sim/engine.h"
#include "topologies/topology_graph.h"

namespace racksim::app {

// CPU seconds per activity of a FULL replay on the reference machine: 684,800 flows of the
// 128-rank Kineto sample replayed at FULL took 33 s of CPU (48 us per flow); its 154,240
// operations at ANALYTIC 0.8 s (5 us per operation).
inline constexpr double kFullSecondsPerFlow = 50e-6;
inline constexpr double kFullSecondsPerOp = 5e-6;
// FULL runs estimated longer than this get the hint.
inline constexpr double kHintAboveS = 180;

struct FullCostEstimate {
  uint64_t ops = 0;
  double flows = 0;  // network flows FULL would run
  double cpu_s = 0;  // ops x kFullSecondsPerOp + flows x kFullSecondsPerFlow
};

// Flows one member of a collective of `kind` on communicator `comm` of `members` ranks sends.
using FlowsPerMember = std::function<double(CommId comm, CollectiveKind kind, uint32_t members)>;

// Flows per member of a collective of `members` ranks running `algorithm` over `channels`
// rings: 2(n-1) ring steps per channel for an all-reduce, n-1 for an all-gather or
// reduce-scatter; NVLS one; direct plans one per peer and phase; chains 8 chunks.
double member_flows(CollectiveKind kind, uint32_t members, sim::Algorithm algorithm,
                    uint32_t channels);

// What the engine will run on `topology` with rank r on GPU rank_to_gpu[r]: each
// communicator's algorithm (choose_algorithm) and ring channels (build_rings).
FlowsPerMember engine_flows(const EventGraph& graph, const topo::Topology& topology,
                            const std::vector<uint32_t>& rank_to_gpu, sim::Algorithm requested);

// `graph` as it will be simulated (folded ranks already left out). Without `flows`, every
// collective is costed as a ring of one channel.
FullCostEstimate estimate_full_cost(const EventGraph& graph, const FlowsPerMember& flows = {});

// The hint for a run at `fidelity` (empty unless FULL and the estimate exceeds `above_s`);
// `switch_to` says how to ask for another fidelity ("--fidelity ANALYTIC").
std::string fidelity_hint(const FullCostEstimate& estimate, config::Simulation::Fidelity fidelity,
                          const std::string& switch_to, double above_s = kHintAboveS);

// Whether a progress line is shown after `wall_s`: at once on a terminal (after a second),
// otherwise (a log file) only for runs that have lasted a few seconds.
bool progress_due(bool terminal, double wall_s);

// "simulating: 45 % of 83872 operations, 12 s wall, about 15 s left (simulated 0.85 s)".
std::string progress_line(const sim::SimProgress& progress);

// What the commands pass down: where the progress goes and where notes (the hint) go.
struct SimFeedback {
  std::function<void(const sim::SimProgress&)> progress;
  std::function<void(const std::string&)> note;
};

// Prints progress lines on stderr: rewritten in place on a terminal, one line every ten
// seconds otherwise; finish() ends a line left open.
class StderrProgress {
 public:
  explicit StderrProgress(bool terminal) : terminal_(terminal) {}
  void update(const sim::SimProgress& progress);
  void finish();
  // progress and note callbacks that print here (the object must outlive the run).
  SimFeedback feedback();

 private:
  bool terminal_;
  bool open_line_ = false;
  double next_s_ = 0;
};

}  // namespace racksim::app
