#include "analysis/steady_state.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <vector>

namespace racksim::analysis {

namespace {

// f(m) from f(m_small) and f(m_large): `weight` is (m - m_large) / (m_large - m_small).
struct Extension {
  explicit Extension(const SteadyStateUse& use)
      : weight(static_cast<double>(use.micro_batches - use.large_micro_batches) /
               (use.large_micro_batches - use.small_micro_batches)) {}
  double weight = 0;
  double operator()(double small, double large) const { return large + weight * (large - small); }
};

// A count extended (path moves, operations, collectives): a whole number.
uint64_t whole(double count) {
  return static_cast<uint64_t>(std::max(0.0, std::round(count)));
}

Breakdown extend_breakdown(const Breakdown& s, const Breakdown& l, const Extension& ext,
                           double step_time_s) {
  Breakdown b = l;
  b.step_time_s = step_time_s;
  b.compute_s = ext(s.compute_s, l.compute_s);
  b.recompute_s = ext(s.recompute_s, l.recompute_s);
  b.optimizer_s = ext(s.optimizer_s, l.optimizer_s);
  b.bubble_s = ext(s.bubble_s, l.bubble_s);
  b.offload_s = ext(s.offload_s, l.offload_s);
  b.other_s = ext(s.other_s, l.other_s);
  for (size_t d = 0; d < b.exposed_comm_s.size(); ++d) {
    b.exposed_comm_s[d] = ext(s.exposed_comm_s[d], l.exposed_comm_s[d]);
  }
  std::map<CommId, double> by_comm = l.exposed_by_comm_s;
  for (const auto& [comm, seconds] : s.exposed_by_comm_s) by_comm.try_emplace(comm, 0.0);
  for (auto& [comm, seconds] : by_comm) {
    const auto in_small = s.exposed_by_comm_s.find(comm);
    seconds = ext(in_small == s.exposed_by_comm_s.end() ? 0 : in_small->second, seconds);
  }
  b.exposed_by_comm_s = std::move(by_comm);
  b.copy_busy_s = ext(s.copy_busy_s, l.copy_busy_s);
  b.copy_to_host_bytes = ext(s.copy_to_host_bytes, l.copy_to_host_bytes);
  b.copy_to_device_bytes = ext(s.copy_to_device_bytes, l.copy_to_device_bytes);
  return b;
}

// The segments stay those of the longer simulated step (what the timeline and pipeline.svg
// draw); the totals are the extended step's.
CriticalPath extend_path(const CriticalPath& s, const CriticalPath& l, const Extension& ext) {
  CriticalPath p = l;
  p.length_s = ext(s.length_s, l.length_s);
  for (size_t k = 0; k < p.by_kind_s.size(); ++k)
    p.by_kind_s[k] = ext(s.by_kind_s[k], l.by_kind_s[k]);
  for (size_t d = 0; d < p.comm_by_dim_s.size(); ++d) {
    p.comm_by_dim_s[d] = ext(s.comm_by_dim_s[d], l.comm_by_dim_s[d]);
  }
  for (size_t r = 0; r < p.by_rank_s.size(); ++r) {
    p.by_rank_s[r] = ext(r < s.by_rank_s.size() ? s.by_rank_s[r] : 0, l.by_rank_s[r]);
  }
  p.rank_changes = static_cast<uint32_t>(whole(ext(s.rank_changes, l.rank_changes)));
  return p;
}

// The entries of two lists matched by key, in the order of `l` and then of the entries only `s`
// has: (entry of `s` or null, entry of `l` or null). An entry missing from one step counts as
// zero there. Keeping `l`'s order keeps its order among equal figures after the stable sorts.
template <typename T, typename KeyOf>
std::vector<std::pair<const T*, const T*>> matched(const std::vector<T>& s, const std::vector<T>& l,
                                                   KeyOf key_of) {
  std::map<decltype(key_of(s.front())), const T*> in_small;
  for (const T& x : s) in_small[key_of(x)] = &x;
  std::vector<std::pair<const T*, const T*>> pairs;
  for (const T& x : l) {
    const auto found = in_small.find(key_of(x));
    pairs.push_back({found == in_small.end() ? nullptr : found->second, &x});
    if (found != in_small.end()) in_small.erase(found);
  }
  for (const T& x : s) {
    if (in_small.count(key_of(x)) > 0) pairs.push_back({&x, nullptr});
  }
  return pairs;
}

template <typename T, typename Field>
double extended(const std::pair<const T*, const T*>& pair, Field field, const Extension& ext) {
  return ext(pair.first ? static_cast<double>(pair.first->*field) : 0,
             pair.second ? static_cast<double>(pair.second->*field) : 0);
}

std::vector<PathOperation> extend_operations(const std::vector<PathOperation>& s,
                                             const std::vector<PathOperation>& l,
                                             const Extension& ext, size_t limit) {
  std::vector<PathOperation> ops;
  const auto key = [](const PathOperation& o) { return std::tuple(o.label, o.kind, o.dim); };
  for (const auto& pair : matched(s, l, key)) {
    PathOperation op = pair.second ? *pair.second : *pair.first;
    op.seconds = extended(pair, &PathOperation::seconds, ext);
    op.count = static_cast<uint32_t>(whole(extended(pair, &PathOperation::count, ext)));
    if (op.seconds > 0) ops.push_back(std::move(op));
  }
  std::stable_sort(ops.begin(), ops.end(), longer_on_path);
  if (ops.size() > limit) ops.resize(limit);
  return ops;
}

LinkSummary extend_links(const LinkSummary& s, const LinkSummary& l, const Extension& ext,
                         double step_time_s, size_t top_links) {
  LinkSummary out = l;
  out.top.clear();
  for (const auto& pair : matched(s.top, l.top, [](const LinkUsage& u) { return u.name; })) {
    LinkUsage u = pair.second ? *pair.second : *pair.first;
    u.bytes = extended(pair, &LinkUsage::bytes, ext);
    u.busy_s = extended(pair, &LinkUsage::busy_s, ext);
    out.top.push_back(std::move(u));
  }
  out.links_used = std::max(s.links_used, l.links_used);
  out.resolution_s = std::max(s.resolution_s, l.resolution_s);
  keep_busiest(&out, step_time_s, top_links);
  return out;
}

std::vector<sim::AlgorithmUse> extend_algorithms(const std::vector<sim::AlgorithmUse>& s,
                                                 const std::vector<sim::AlgorithmUse>& l,
                                                 const Extension& ext) {
  std::vector<sim::AlgorithmUse> out;
  const auto key = [](const sim::AlgorithmUse& u) {
    return std::tuple(u.kind, u.dim, u.algorithm);
  };
  for (const auto& pair : matched(s, l, key)) {
    sim::AlgorithmUse use = pair.second ? *pair.second : *pair.first;
    use.collectives = whole(extended(pair, &sim::AlgorithmUse::collectives, ext));
    out.push_back(use);
  }
  return out;
}

}  // namespace

double micro_batch_spacing_error(const EventGraph& graph, const sim::SimResult& result, int first,
                                 int last, double period_s) {
  const double unset = -1;
  std::vector<double> first_end(graph.num_ranks(), unset), last_end(graph.num_ranks(), unset);
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.micro_batch != first && op.micro_batch != last) continue;
    std::vector<double>& ends = op.micro_batch == first ? first_end : last_end;
    ends[op.rank] = std::max(ends[op.rank], result.timing[id].end_s);
  }
  double worst = 0;
  for (RankId r = 0; r < graph.num_ranks(); ++r) {
    if (first_end[r] == unset && last_end[r] == unset) continue;  // a mirrored rank
    if (first_end[r] == unset || last_end[r] == unset || period_s <= 0) return HUGE_VAL;
    const double spacing = (last_end[r] - first_end[r]) / (last - first);
    worst = std::max(worst, std::abs(spacing - period_s) / period_s);
  }
  return worst;
}

RankId extended_critical_rank(const EventGraph& small_graph, const sim::SimResult& small,
                              const EventGraph& large_graph, const sim::SimResult& large,
                              const SteadyStateUse& use) {
  const Extension ext(use);
  const std::vector<double> small_end = rank_end_times(small_graph, small);
  std::vector<double> end = rank_end_times(large_graph, large);
  for (size_t r = 0; r < end.size(); ++r) end[r] = ext(small_end[r], end[r]);
  return static_cast<RankId>(std::max_element(end.begin(), end.end()) - end.begin());
}

StepReport extend_step_report(const TrainingPlan& plan, const StepReport& small,
                              const StepReport& large, const SteadyStateUse& use, size_t top_links,
                              size_t top_operations) {
  const Extension ext(use);
  StepReport r = large;
  set_plan_figures(plan, ext(small.step_time_s, large.step_time_s), &r);
  r.breakdown = extend_breakdown(small.breakdown, large.breakdown, ext, r.step_time_s);
  r.critical_path = extend_path(small.critical_path, large.critical_path, ext);
  r.path_operations =
      extend_operations(small.path_operations, large.path_operations, ext, top_operations);
  r.links = extend_links(small.links, large.links, ext, r.step_time_s, top_links);
  const GpuStateSeconds& gs = small.energy.gpu_seconds;
  GpuStateSeconds& gl = r.energy.gpu_seconds;
  gl.busy_s = ext(gs.busy_s, gl.busy_s);
  gl.comm_s = ext(gs.comm_s, gl.comm_s);
  gl.idle_s = ext(gs.idle_s, gl.idle_s);
  r.algorithms = extend_algorithms(small.algorithms, large.algorithms, ext);
  // What ran: both simulated steps.
  r.sim_events = small.sim_events + large.sim_events;
  r.sim_ops = small.sim_ops + large.sim_ops;
  r.sim_flows = small.sim_flows + large.sim_flows;
  r.sim_wall_s = small.sim_wall_s + large.sim_wall_s;
  r.analytic_collectives = small.analytic_collectives + large.analytic_collectives;
  r.flow_collectives = small.flow_collectives + large.flow_collectives;
  r.measured_table_collectives =
      small.measured_table_collectives + large.measured_table_collectives;
  r.routes_computed = std::max(small.routes_computed, large.routes_computed);
  r.steady_state = use;
  return r;
}

}  // namespace racksim::analysis
