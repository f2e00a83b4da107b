#include "analysis/trace_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/algorithm_table.h"
#include "common/intervals.h"
#include "graph/group_label.h"

namespace racksim::analysis {

namespace {

constexpr CommDim kDims[] = {CommDim::kTp, CommDim::kCp, CommDim::kEp,
                             CommDim::kPp, CommDim::kDp, CommDim::kOther};

// Busy time per stream of `rank`: the union of its active operations' [start, end).
std::vector<StreamBusy> stream_busy(const EventGraph& graph, const sim::SimResult& result,
                                    RankId rank) {
  std::vector<std::vector<std::pair<double, double>>> intervals(graph.streams().size());
  std::vector<uint64_t> ops(graph.streams().size(), 0);
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.rank != rank || op.kind == OpKind::kRecv) continue;  // recvs are passive
    ++ops[op.stream];
    intervals[op.stream].emplace_back(result.timing[id].start_s, result.timing[id].end_s);
  }
  std::vector<StreamBusy> busy;
  for (size_t s = 0; s < intervals.size(); ++s) {
    if (ops[s] == 0) continue;
    busy.push_back({graph.streams()[s].name, union_length(std::move(intervals[s])), ops[s]});
  }
  return busy;
}

std::string duration_text(double s) {
  if (s < 1e-3) return fmt::format("{:.3f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.4f} s", s);
}

std::string row(const std::string& name, double seconds, double step) {
  return fmt::format("  {:<28}{:>14}{:>8.1f} %\n", name, duration_text(seconds),
                     step > 0 ? 100 * seconds / step : 0.0);
}

std::string_view compute_name(chakra::ComputeSource c) {
  return c == chakra::ComputeSource::kRecorded ? "recorded" : "model";
}

// What the Chakra reader made of the trace's nodes.
std::string chakra_nodes_text(const chakra::TraceSummary& s) {
  return fmt::format(
      "\nTrace: {} nodes: {} compute, {} memory, {} collective, {} send, {} recv, {} metadata, {} "
      "of unknown type; {} of them host (is_cpu_op) work on the cpu stream\n"
      "  GPU compute timed by its recorded duration: {}, by the compute model: {}\n"
      "  data_deps to nodes not in the trace: {} (ignored); ctrl_deps: {}, {} to nodes not in the "
      "trace (call-tree edges, not scheduling edges)\n",
      s.nodes, s.by_type[4], s.by_type[2] + s.by_type[3], s.by_type[7], s.by_type[5], s.by_type[6],
      s.by_type[1], s.unknown_type, s.cpu_ops, s.timed_recorded, s.timed_model, s.dangling_deps,
      s.ctrl_deps, s.ctrl_dangling);
}

// The exposed communication no dimension claims, split by the groups it came from (a trace's
// collectives without a process-group name, or with one that names no dimension).
std::string other_groups_text(const TraceReport& r) {
  std::string out;
  for (size_t i = 0; i < r.groups.size(); ++i) {
    if (r.groups[i].dim != CommDim::kOther || r.group_exposed_s[i] == 0) continue;
    const std::string name = r.groups[i].name == r.group_members[i]
                                 ? r.group_members[i]
                                 : fmt::format("'{}' {}", r.groups[i].name, r.group_members[i]);
    out += fmt::format("    {:<26}{:>14}{:>8.1f} %  (of the above)\n", name,
                       duration_text(r.group_exposed_s[i]),
                       r.step_time_s > 0 ? 100 * r.group_exposed_s[i] / r.step_time_s : 0.0);
  }
  return out;
}

}  // namespace

TraceReport make_trace_report(const chakra::ChakraTrace& trace, const sim::SimResult& result,
                              TraceReportContext context) {
  TraceReport r;
  r.context = std::move(context);
  r.compute = compute_name(trace.compute);
  r.ranks = trace.graph.num_ranks();
  r.step_time_s = result.makespan_s;
  const RankId critical = critical_rank(trace.graph, result);
  r.breakdown = rank_breakdown(trace.graph, result, critical, r.step_time_s);
  r.streams = stream_busy(trace.graph, result, critical);
  r.groups = trace.groups;
  for (const auto& g : trace.groups) {
    const auto& members = trace.graph.communicator(g.comm);
    r.group_ranks.push_back(members.size());
    r.group_members.push_back(group_label(members));
    const auto exposed = r.breakdown.exposed_by_comm_s.find(g.comm);
    r.group_exposed_s.push_back(exposed != r.breakdown.exposed_by_comm_s.end() ? exposed->second
                                                                               : 0.0);
  }
  r.summary = trace.summary;
  r.num_ops = trace.summary.num_ops;
  if (r.step_time_s > 0 && r.ranks > 0)
    r.flops_per_s_per_gpu = r.num_ops / (r.ranks * r.step_time_s);
  if (r.context.peak_flops_per_gpu > 0)
    r.utilization = r.flops_per_s_per_gpu / r.context.peak_flops_per_gpu;
  r.warnings = trace.warnings;
  r.sim_ops = trace.graph.size();
  r.sim_events = result.activities;
  r.sim_flows = result.flows;
  r.sim_wall_s = result.wall_s;
  r.algorithms = result.algorithms;
  return r;
}

nlohmann::ordered_json trace_report_json(const TraceReport& r) {
  using nlohmann::ordered_json;
  const Breakdown& b = r.breakdown;
  ordered_json exposed;
  for (CommDim d : kDims) exposed[std::string(to_string(d))] = b.exposed_comm(d);
  ordered_json streams = ordered_json::array();
  for (const auto& s : r.streams)
    streams.push_back({{"stream", s.stream}, {"busy_s", s.busy_s}, {"ops", s.ops}});
  ordered_json groups = ordered_json::array();
  for (size_t i = 0; i < r.groups.size(); ++i) {
    groups.push_back({{"name", r.groups[i].name},
                      {"dim", std::string(to_string(r.groups[i].dim))},
                      {"ranks", r.group_ranks[i]},
                      {"members", r.group_members[i]},
                      {"exposed_s", r.group_exposed_s[i]}});
  }
  const auto& s = r.summary;
  ordered_json j;
  j["trace"] = r.context.trace;
  j["platform"] = r.context.platform;
  j["ranks"] = r.ranks;
  j["gpus"] = r.context.gpus;
  j["compute"] = r.compute;
  j["step_time_s"] = r.step_time_s;
  j["breakdown_s"] = {
      {"rank", b.rank},          {"compute", b.compute_s}, {"recompute", b.recompute_s},
      {"exposed_comm", exposed}, {"bubble", b.bubble_s},   {"optimizer", b.optimizer_s},
      {"offload", b.offload_s},  {"other", b.other_s}};
  j["streams"] = streams;
  j["process_groups"] = groups;
  j["flops"] = {{"num_ops", r.num_ops},
                {"per_gpu_per_s", r.flops_per_s_per_gpu},
                {"peak_flops_per_gpu", r.context.peak_flops_per_gpu},
                {"utilization", r.utilization}};
  j["trace_nodes"] = {{"total", s.nodes},
                      {"compute", s.by_type[4]},
                      {"memory", s.by_type[2] + s.by_type[3]},
                      {"collective", s.by_type[7]},
                      {"send", s.by_type[5]},
                      {"recv", s.by_type[6]},
                      {"metadata", s.by_type[1]},
                      {"unknown_type", s.unknown_type},
                      {"cpu", s.cpu_ops},
                      {"timed_recorded", s.timed_recorded},
                      {"timed_model", s.timed_model},
                      {"dangling_data_deps", s.dangling_deps},
                      {"ctrl_deps", s.ctrl_deps},
                      {"ctrl_deps_outside", s.ctrl_dangling}};
  j["warnings"] = r.warnings;
  config::Simulation::Fidelity fidelity = config::Simulation::FULL;
  config::Simulation::Fidelity_Parse(r.context.fidelity, &fidelity);
  j["collective_algorithms"] = algorithms_json(r.algorithms);
  j["sim"] = {{"fidelity", r.context.fidelity},
              {"fidelity_error_budget", sim::fidelity_error_budget(fidelity)},
              {"ops", r.sim_ops},
              {"events", r.sim_events},
              {"flows", r.sim_flows},
              {"wall_s", r.sim_wall_s}};
  return j;
}

std::string trace_report_text(const TraceReport& r) {
  const Breakdown& b = r.breakdown;
  const auto& s = r.summary;
  std::string out = fmt::format("racksim replay: {}\n  {} rank(s) on {}, compute: {}\n\n",
                                r.context.trace, r.ranks, r.context.platform,
                                r.compute == "recorded"
                                    ? "recorded durations"
                                    : "the compute model where the trace gives the work (Chakra: "
                                      "num_ops/tensor_size; Kineto: GEMM shapes)");
  out += fmt::format("step time            {} ({:.9f} s)\n", duration_text(r.step_time_s),
                     r.step_time_s);
  if (r.num_ops > 0) {
    out += fmt::format(
        "hardware FLOPs       {:.4g} (num_ops of all ranks) = {:.1f} TFLOP/s per GPU, "
        "{:.2f} % of {:.1f} TFLOP/s peak\n",
        r.num_ops, r.flops_per_s_per_gpu / 1e12, 100 * r.utilization,
        r.context.peak_flops_per_gpu / 1e12);
  }
  out += fmt::format(
      "\nBreakdown of the critical rank {} (its compute stream; zero lines hidden, all in "
      "report.json):\n",
      b.rank);
  out += row("compute", b.compute_s, r.step_time_s);
  // Lines at zero say nothing a reader needs; the JSON keeps every key.
  auto nonzero_row = [&](const std::string& name, double seconds) {
    if (seconds != 0) out += row(name, seconds, r.step_time_s);
  };
  nonzero_row("recompute", b.recompute_s);
  for (CommDim d : kDims) {
    nonzero_row(fmt::format("exposed comm {}", to_string(d)), b.exposed_comm(d));
    if (d == CommDim::kOther && b.exposed_comm(d) != 0) out += other_groups_text(r);
  }
  nonzero_row("waiting for a sender", b.bubble_s);
  nonzero_row("optimizer", b.optimizer_s);
  nonzero_row("offload", b.offload_s);
  nonzero_row("other", b.other_s);
  out += row("total", b.total_s(), r.step_time_s);
  out += fmt::format("\nStreams of rank {} (busy time, operations):\n", b.rank);
  for (const auto& st : r.streams)
    out += fmt::format("  {:<28}{:>14}  {} ops\n", st.stream, duration_text(st.busy_s), st.ops);
  out += "\nProcess groups (exposed communication is charged to their dimension):\n";
  for (size_t i = 0; i < r.groups.size(); ++i) {
    const std::string members =
        r.groups[i].name == r.group_members[i] ? "" : "  " + r.group_members[i];
    out += fmt::format("  {:<28}{:>6} ranks  -> {:<6} exposed {:>12}{}\n", r.groups[i].name,
                       r.group_ranks[i], to_string(r.groups[i].dim),
                       duration_text(r.group_exposed_s[i]), members);
  }
  if (r.groups.empty()) out += "  (no collectives)\n";
  // A Kineto trace says what the reader made of it in its own section (kineto_report.h).
  if (s.nodes > 0) out += chakra_nodes_text(s);
  if (!r.warnings.empty())
    out += fmt::format("  {} warning(s): see above or report.json\n", r.warnings.size());
  out += algorithms_text(r.algorithms);
  out += fmt::format(
      "\nSimulation: {} operations, {} SimGrid activities ({} flows), fidelity {}, {:.2f} s wall\n",
      r.sim_ops, r.sim_events, r.sim_flows, r.context.fidelity, r.sim_wall_s);
  return out;
}

}  // namespace racksim::analysis
