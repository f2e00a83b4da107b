// What the what-if faults (topologies/faults.h) cost a training step and where they land.
//
// The step is simulated twice: without the faults (the baseline, app/fault_baseline.h) and with
// them; the cost is the difference of the step times, for all the faults together. For each
// fault the report names the ranks it touches and the critical-path stretch of the faulted step
// on those ranks that the fault slows: GPU kernels for a straggler, communication for a degraded
// NVLink port, communication that leaves the scale-up domain for a degraded or dead NIC, host
// work for a slow host, GPU kernels on ranks slower than the median for a spread, each grouped by
// path kind ("backward", "comm.dp"). A fault whose stretches are not on the critical path costs
// nothing unless it moves the path.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/critical_path.h"
#include "graph/event_graph.h"
#include "topologies/faults.h"

namespace racksim::analysis {

// The step without the faults, as the baseline simulation reports it.
struct BaselineStep {
  double step_time_s = 0;
  std::array<double, kNumPathKinds> path_s{};  // critical path seconds by PathKind
};

struct FaultImpact {
  std::string kind;         // straggler, degraded_link, dead_nic, slow_host, gpu_spread
  std::string description;  // e.g. "rank 3: GPU kernels x1.2"
  std::vector<RankId> ranks;
  // The faulted step's critical-path seconds on `ranks` that the fault slows, by stretch
  // ("forward", "comm.dp", "host"), largest first.
  std::vector<std::pair<std::string, double>> stretches;
  std::string note;  // e.g. a slow host on a step without host work

  // The largest stretch, or "off the critical path".
  std::string lands_on() const;
};

struct FaultsReport {
  bool active = false;
  BaselineStep baseline;
  double step_time_s = 0;
  std::array<double, kNumPathKinds> path_s{};
  std::vector<FaultImpact> faults;

  double cost_s() const { return step_time_s - baseline.step_time_s; }
};

// The impacts of `faults` on a step of `graph` whose critical path is `path` (rank r on GPU r,
// scale-up domains of `domain_size` GPUs).
FaultsReport fault_report(const topo::Faults& faults, int gpus_per_node, int domain_size,
                          const EventGraph& graph, const CriticalPath& path, double step_time_s,
                          const BaselineStep& baseline);

nlohmann::ordered_json faults_json(const FaultsReport& report);
// Empty when no faults were set.
std::string faults_text(const FaultsReport& report);

}  // namespace racksim::analysis
