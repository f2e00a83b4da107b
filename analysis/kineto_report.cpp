#include "analysis/kineto_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/intervals.h"

namespace racksim::analysis {

namespace {

// Busy time of each stream of `rank`: the union of its operations' simulated intervals.
std::map<std::string, double> simulated_busy(const EventGraph& graph, const sim::SimResult& result,
                                             RankId rank, double* rank_end) {
  std::map<StreamId, std::vector<std::pair<double, double>>> spans;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.rank != rank) continue;
    *rank_end = std::max(*rank_end, result.timing[id].end_s);
    spans[op.stream].emplace_back(result.timing[id].start_s, result.timing[id].end_s);
  }
  std::map<std::string, double> busy;
  for (auto& [stream, list] : spans) {
    busy[graph.streams()[stream].name] = union_length(std::move(list));
  }
  return busy;
}

std::string ms(double s) {
  return fmt::format("{:.3f} ms", s * 1e3);
}

std::string percent_diff(double simulated, double recorded) {
  if (recorded <= 0) return "";
  return fmt::format("{:+.1f} %", 100 * (simulated - recorded) / recorded);
}

}  // namespace

KinetoComparison compare_kineto(const kineto::KinetoTrace& trace, const EventGraph& graph,
                                const sim::SimResult& result) {
  KinetoComparison c;
  c.step = trace.step_name;
  c.replicated = trace.replicated;
  c.source_world_size = trace.source_world_size;
  c.gpu = trace.gpu;
  c.gemm_timing = trace.gemm_timing;
  for (uint32_t p = 0; p < trace.programs.size(); ++p) {
    const auto rank = static_cast<RankId>(
        std::find(trace.program_of_rank.begin(), trace.program_of_rank.end(), p) -
        trace.program_of_rank.begin());
    const kineto::RankProgram& program = trace.programs[p];
    RankComparison r;
    r.file = program.file;
    r.rank = rank;
    r.recorded_step_s = program.step_time_s;
    r.counts = program.counts;
    const auto busy = simulated_busy(graph, result, rank, &r.simulated_step_s);
    for (const kineto::RecordedStream& s : program.recorded) {
      const auto it = busy.find(s.name);
      r.streams.push_back({s.name, s.busy_s, it == busy.end() ? 0 : it->second, s.ops});
    }
    c.ranks.push_back(std::move(r));
  }
  return c;
}

nlohmann::ordered_json kineto_comparison_json(const KinetoComparison& c) {
  using nlohmann::ordered_json;
  ordered_json ranks = ordered_json::array();
  for (const RankComparison& r : c.ranks) {
    ordered_json streams = ordered_json::array();
    for (const StreamComparison& s : r.streams) {
      streams.push_back({{"stream", s.stream},
                         {"recorded_busy_s", s.recorded_s},
                         {"simulated_busy_s", s.simulated_s},
                         {"ops", s.ops}});
    }
    const auto& n = r.counts;
    ranks.push_back({{"file", r.file},
                     {"rank", r.rank},
                     {"recorded_step_time_s", r.recorded_step_s},
                     {"simulated_step_time_s", r.simulated_step_s},
                     {"streams", streams},
                     {"events",
                      {{"kernels", n.kernels},
                       {"collectives", n.collectives},
                       {"nccl_kernels_at_recorded_duration", n.p2p_kernels},
                       {"host_device_copies", n.copies},
                       {"device_copies", n.device_copies},
                       {"memsets", n.memsets},
                       {"host_ops", n.host_ops},
                       {"synchronizations", n.syncs},
                       {"stream_waits", n.stream_waits},
                       {"stream_waits_from_cuda_sync", n.synced_stream_waits},
                       {"thread_hand_overs", n.thread_anchors},
                       {"gpu_ops_without_launch", n.unlaunched},
                       {"gemm_kernels", n.gemm_kernels}}}});
  }
  ordered_json j;
  j["step"] = c.step;
  j["replicated"] = c.replicated;
  j["source_world_size"] = c.source_world_size;
  j["gpu"] = c.gpu;
  j["ranks"] = ranks;
  const kineto::GemmTiming& g = c.gemm_timing;
  j["compute"] = {{"source", g.model ? "model" : "recorded"},
                  {"modelled_kernels", g.modelled_kernels},
                  {"modelled_s", g.modelled_s},
                  {"modelled_kernels_recorded_s", g.modelled_recorded_s},
                  {"recorded_kernels", g.recorded_kernels},
                  {"recorded_s", g.recorded_s}};
  return j;
}

std::string kineto_comparison_text(const KinetoComparison& c) {
  std::string out = fmt::format("\nKineto trace: {} replayed{}\n", c.step,
                                c.gpu.empty() ? "" : fmt::format(" (recorded on {})", c.gpu));
  if (c.replicated) {
    out +=
        fmt::format("  REPLICATED: ONE RANK'S TRACE STANDS FOR EVERY RANK (the job had {} ranks)\n",
                    c.source_world_size);
  }
  const kineto::GemmTiming& g = c.gemm_timing;
  if (g.model) {
    out += fmt::format(
        "  --compute model: {} GEMM kernels timed by the compute model, {} (they took {} in the "
        "trace); {} other kernels at their recorded durations, {}\n",
        g.modelled_kernels, ms(g.modelled_s), ms(g.modelled_recorded_s), g.recorded_kernels,
        ms(g.recorded_s));
  }
  for (const RankComparison& r : c.ranks) {
    out += fmt::format("\nRank {} ({}): step time recorded {}, simulated {} ({})\n", r.rank, r.file,
                       ms(r.recorded_step_s), ms(r.simulated_step_s),
                       percent_diff(r.simulated_step_s, r.recorded_step_s));
    out += fmt::format("  {:<14}{:>14}{:>14}{:>10}{:>8}\n", "GPU stream", "recorded busy",
                       "simulated", "diff", "ops");
    for (const StreamComparison& s : r.streams) {
      out += fmt::format("  {:<14}{:>14}{:>14}{:>10}{:>8}\n", s.stream, ms(s.recorded_s),
                         ms(s.simulated_s), percent_diff(s.simulated_s, s.recorded_s), s.ops);
    }
    const auto& n = r.counts;
    out += fmt::format(
        "  read: {} kernels, {} collectives, {} NCCL kernels kept at their recorded duration "
        "(send/recv or no size), {} host<->device copies, {} device copies, {} memsets; {} host "
        "ops, {} synchronizations, {} stream waits ({} located by cuda_sync events), {} thread "
        "hand-overs; {} kernels inside a GEMM operator of known shape\n",
        n.kernels, n.collectives, n.p2p_kernels, n.copies, n.device_copies, n.memsets, n.host_ops,
        n.syncs, n.stream_waits, n.synced_stream_waits, n.thread_anchors, n.gemm_kernels);
  }
  return out;
}

}  // namespace racksim::analysis
