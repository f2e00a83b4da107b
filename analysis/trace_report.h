// The report of a replayed trace (racksim replay): step time, the breakdown of the critical
// rank (the same breakdown as a training step's, with exposed communication per parallel
// dimension as the trace's process-group names give it), how busy each stream of that rank
// was, the hardware FLOPs the trace records (num_ops) against the GPUs' peak, and what the
// reader made of the trace. Printed as text and written as report.json (keys: README.md,
// "Replaying a Chakra trace").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/breakdown.h"
#include "sim/engine.h"
#include "traces/chakra_build.h"

namespace racksim::analysis {

// What the report needs to know beyond the trace and the simulation.
struct TraceReportContext {
  std::string trace;              // the prefix (or file) replayed
  std::string platform;           // the cluster in one line
  uint32_t gpus = 0;              // GPUs of the cluster
  double peak_flops_per_gpu = 0;  // BF16 dense peak, the denominator of the utilization
  std::string fidelity;
};

struct StreamBusy {
  std::string stream;
  double busy_s = 0;  // union of the stream's operations' intervals on the critical rank
  uint64_t ops = 0;
};

struct TraceReport {
  TraceReportContext context;
  std::string compute;  // "recorded" or "model"
  uint32_t ranks = 0;
  double step_time_s = 0;
  Breakdown breakdown;
  std::vector<StreamBusy> streams;  // of the critical rank
  std::vector<chakra::ProcessGroup> groups;
  std::vector<size_t> group_ranks;         // members per group
  std::vector<std::string> group_members;  // per group, its ranks (group_label)
  // Per group: the critical rank's exposed communication charged to its collectives.
  std::vector<double> group_exposed_s;
  double num_ops = 0;              // hardware FLOPs recorded in the trace, all ranks
  double flops_per_s_per_gpu = 0;  // num_ops / (ranks x step time)
  double utilization = 0;          // of the peak
  chakra::TraceSummary summary;
  std::vector<std::string> warnings;
  uint64_t sim_ops = 0;
  uint64_t sim_events = 0;
  uint64_t sim_flows = 0;
  double sim_wall_s = 0;
  std::vector<sim::AlgorithmUse> algorithms;  // which algorithm each kind of collective ran
};

TraceReport make_trace_report(const chakra::ChakraTrace& trace, const sim::SimResult& result,
                              TraceReportContext context);

nlohmann::ordered_json trace_report_json(const TraceReport& report);
std::string trace_report_text(const TraceReport& report);

}  // namespace racksim::analysis
