#include "sim/replay.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "graph/graph_check.h"
#include "sim/actor_limit.h"
#include "sim/replay_state.h"

namespace racksim::sim {

Replay::Replay(const EventGraph& graph, RankPlacement placement, const ComputeModel& compute,
               const SimOptions& options, FabricView* fabric)
    : graph_(graph),
      placement_(std::move(placement)),
      compute_(compute),
      options_(options),
      fabric_(*fabric) {
  const size_t n = graph.size();
  matched_recv_ = match_sends_to_recvs(graph);
  // A folded graph holds the simulated members' share of each collective only.
  if (options_.simulated_ranks.empty()) check_collectives(graph);
  if (options_.fidelity == config::Simulation::AUTO) {
    link_activity_ = std::make_unique<LinkActivity>(fabric_.num_directed_links());
  }
  remaining_.assign(n, 0);
  timing_.assign(n, OpTiming{});
  host_issued_s_.assign(graph.num_ranks(), 0.0);
  released_by_.assign(n, kNoOp);
  // Reverse dependencies in compressed rows.
  dependents_end_.assign(n, 0);
  for (OpId id = 0; id < n; ++id) {
    for (OpId d : graph.deps(id)) ++dependents_end_[d];
    remaining_[id] = static_cast<int32_t>(graph.deps(id).size());
    const Op& op = graph.op(id);
    if (op.kind == OpKind::kRecv) ++remaining_[id];  // the data must arrive too
    if (op.kind == OpKind::kCopy && op.peer >= placement_.numa_hosts[op.rank].size()) {
      throw std::runtime_error(fmt::format(
          "copy op {} of rank {} names NUMA node {}, but its server has {} CPU socket(s)", id,
          op.rank, op.peer, placement_.numa_hosts[op.rank].size()));
    }
  }
  uint64_t total = 0;
  for (auto& end : dependents_end_) end = total += end;
  dependents_.assign(total, kNoOp);
  std::vector<uint64_t> fill(n, 0);
  for (OpId id = 0; id < n; ++id) {
    for (OpId d : graph.deps(id)) {
      const uint64_t begin = d == 0 ? 0 : dependents_end_[d - 1];
      dependents_[begin + fill[d]++] = id;
    }
  }
  // One actor per (rank, stream) with active operations; recvs are passive.
  const size_t streams = graph.streams().size();
  actor_index_.assign(static_cast<size_t>(graph.num_ranks()) * streams, -1);
  for (OpId id = 0; id < n; ++id) {
    const Op& op = graph.op(id);
    if (op.kind == OpKind::kRecv) continue;
    int32_t& index = actor_index_[op.rank * streams + op.stream];
    if (index < 0) {
      index = static_cast<int32_t>(actors_.size());
      auto actor = std::make_unique<StreamActor>();
      actor->rank = op.rank;
      actor->stream = op.stream;
      actors_.push_back(std::move(actor));
    }
    actors_[index]->ops.push_back(id);
  }
  planners_.resize(graph.num_communicators());
  mark_lazy_streams();
}

// Concurrent Execs on one GPU host share its speed, so a rank's compute streams advance
// without activities only when it has one; host work never occupies the GPU.
void Replay::mark_lazy_streams() {
  std::vector<uint32_t> compute_streams(graph_.num_ranks(), 0);
  for (const auto& actor : actors_) {
    if (graph_.streams()[actor->stream].kind == StreamKind::kCompute) {
      ++compute_streams[actor->rank];
    }
  }
  for (auto& actor : actors_) {
    const StreamKind kind = graph_.streams()[actor->stream].kind;
    actor->lazy_compute = kind == StreamKind::kHost ||
                          (kind == StreamKind::kCompute && compute_streams[actor->rank] == 1);
  }
}

Replay::~Replay() = default;

void Replay::start() {
  check_actor_count(actors_.size(), fmt::format("simulating {} ranks", graph_.num_ranks()));
  for (size_t i = 0; i < actors_.size(); ++i) {
    StreamActor& a = *actors_[i];
    a.wake = s4u::Semaphore::create(0);
    const std::string name = fmt::format("rank{}.{}", a.rank, graph_.streams()[a.stream].name);
    s4u::Actor::create(name, placement_.host[a.rank], [this, i] { run_stream(i); });
  }
}

void Replay::run_stream(size_t index) {
  StreamActor& actor = *actors_[index];
  for (size_t i = 0; i < actor.ops.size(); ++i) {
    const OpId op = actor.ops[i];
    wait_ready(actor, op);
    double ready_s = std::max(actor.clock, ready_time(op));
    const Op& o = graph_.op(op);
    switch (o.kind) {
      case OpKind::kCompute:
        i = execute_compute_run(actor, i, ready_s);
        continue;  // completes its ops
      case OpKind::kSend:
        ready_s = sleep_until(ready_s);
        execute_send(op);
        break;
      case OpKind::kCollective:
        execute_collective(index, op, ready_s);
        continue;  // completes itself
      case OpKind::kCopy:
        ready_s = sleep_until(ready_s);
        execute_copy(op);
        break;
      case OpKind::kRecv:
        break;  // never on an actor (see the constructor)
    }
    actor.clock = s4u::Engine::get_clock();
    complete(op, ready_s, actor.clock);
    if (o.kind == OpKind::kSend) satisfy(matched_recv_[op], op);
  }
}

bool Replay::has_dependents(OpId op) const {
  const uint64_t begin = op == 0 ? 0 : dependents_end_[op - 1];
  return dependents_end_[op] > begin;
}

double Replay::ready_time(OpId op) const {
  const OpId by = released_by_[op];
  return by == kNoOp ? 0.0 : timing_[by].end_s;
}

double Replay::fault_time_factor(const Op& op) const {
  const bool host = graph_.streams()[op.stream].kind == StreamKind::kHost;
  const std::vector<double>& factors = host ? options_.host_time_factor : options_.gpu_time_factor;
  return op.rank < factors.size() ? factors[op.rank] : 1.0;
}

double Replay::sleep_until(double time_s) {
  const double now = s4u::Engine::get_clock();
  if (time_s <= now) return now;
  ++activities_;
  s4u::this_actor::sleep_for(time_s - now);
  return s4u::Engine::get_clock();
}

bool Replay::host_syncs_before(OpId op) const {
  if (graph_.op(op).phase == Phase::kOptimizer) return true;
  for (OpId d : graph_.deps(op)) {
    const Op& dep = graph_.op(d);
    if ((dep.kind == OpKind::kSend || dep.kind == OpKind::kRecv) && dep.dim == CommDim::kPp) {
      return true;
    }
  }
  return false;
}

bool Replay::host_runs_ahead(const StreamActor& actor) const {
  return compute_.host_runs_ahead && graph_.streams()[actor.stream].kind == StreamKind::kCompute;
}

double Replay::host_clock_after(const StreamActor& actor, OpId op, double ready_s) const {
  double host = host_issued_s_[actor.rank];
  if (host_syncs_before(op)) host = std::max(host, ready_s);
  const Op& o = graph_.op(op);
  return host + compute_.host_issue_s(o, graph_.shape(o.shape));  // faults do not scale it
}

double Replay::issued_s(const StreamActor& actor, OpId op, double ready_s) {
  if (!host_runs_ahead(actor)) return ready_s;
  host_issued_s_[actor.rank] = host_clock_after(actor, op, ready_s);
  return std::max(ready_s, host_issued_s_[actor.rank]);
}

size_t Replay::execute_compute_run(StreamActor& actor, size_t first, double ready_s) {
  if (actor.lazy_compute) {
    // Nothing shares this stream's GPU (or CPU) time: the kernel ends its duration later.
    const OpId op = actor.ops[first];
    const double start = issued_s(actor, op, ready_s);
    actor.clock = start + op_duration_s(op);
    complete(op, start, actor.clock);
    return first;
  }
  sleep_until(issued_s(actor, actor.ops[first], ready_s));
  // Kernels that follow each other on the stream with nothing entering or leaving in between
  // run as one Exec: the timing is the same, and the replay creates a fraction of the
  // activities. Each kernel still gets its own start and end. A kernel the host has not issued
  // by the time the run would reach it starts a run of its own.
  size_t last = first;
  double total = op_duration_s(actor.ops[first]);
  const double start = s4u::Engine::get_clock();
  while (last + 1 < actor.ops.size()) {
    const OpId next = actor.ops[last + 1];
    if (graph_.op(next).kind != OpKind::kCompute || !graph_.deps(next).empty() ||
        has_dependents(actor.ops[last])) {
      break;
    }
    if (host_runs_ahead(actor)) {
      const double issue = host_clock_after(actor, next, start + total);
      if (issue > start + total) break;  // not issued yet: it starts the next run
      host_issued_s_[actor.rank] = issue;
    }
    ++last;
    total += op_duration_s(next);
  }
  if (total > 0) {
    ++activities_;
    s4u::this_actor::execute(total * placement_.host[actor.rank]->get_speed());
  }
  const double end = s4u::Engine::get_clock();
  // Another stream's kernels sharing the GPU slow the whole run alike: each kernel keeps its
  // share of the run's time, rather than the last one taking all of the slowdown.
  const double stretch = total > 0 ? (end - start) / total : 1;
  double t = start;
  for (size_t k = first; k <= last; ++k) {
    const double d = op_duration_s(actor.ops[k]) * stretch;
    complete(actor.ops[k], t, k == last ? end : std::min(t + d, end));
    t += d;
  }
  actor.clock = end;
  return last;
}

void Replay::wait_ready(StreamActor& actor, OpId op) {
  // Cooperative scheduling: nothing else runs between this check and acquire(), so a
  // completion cannot slip in unnoticed.
  while (remaining_[op] > 0) {
    actor.waiting_for = op;
    actor.wake->acquire();
  }
}

void Replay::complete(OpId op, double start_s, double end_s) {
  if (timing_[op].start_s < 0 || graph_.op(op).kind != OpKind::kRecv) timing_[op].start_s = start_s;
  timing_[op].end_s = end_s;
  ++completed_;
  if (options_.progress && completed_ % 4096 == 0) report_progress();
  const uint64_t begin = op == 0 ? 0 : dependents_end_[op - 1];
  for (uint64_t i = begin; i < dependents_end_[op]; ++i) satisfy(dependents_[i], op);
}

void Replay::report_progress() {
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (wall_s < next_progress_s_) return;
  next_progress_s_ = wall_s + options_.progress_every_s;
  options_.progress({completed_, graph_.size(), wall_s, s4u::Engine::get_clock()});
}

void Replay::satisfy(OpId op, OpId by) {
  // The dependency that ends last releases the operation. Lazy streams complete operations
  // ahead of SimGrid's clock, so it is not always the last one satisfied.
  const OpId latest = released_by_[op];
  if (latest == kNoOp || timing_[by].end_s >= timing_[latest].end_s) released_by_[op] = by;
  if (--remaining_[op] > 0) return;
  const Op& o = graph_.op(op);
  if (o.kind == OpKind::kRecv) {
    // Passive: done as soon as its data is in and its dependencies are done.
    const double end = ready_time(op);
    complete(op, timing_[op].start_s < 0 ? end : timing_[op].start_s, end);
    return;
  }
  const size_t streams = graph_.streams().size();
  StreamActor& actor = *actors_[actor_index_[o.rank * streams + o.stream]];
  if (actor.waiting_for == op) {
    actor.waiting_for = kNoOp;
    actor.wake->release();
  }
}

SimResult Replay::finish() {
  if (completed_ != graph_.size()) {
    for (OpId id = 0; id < graph_.size(); ++id) {
      if (timing_[id].end_s < 0) {
        const Op& op = graph_.op(id);
        throw std::runtime_error(fmt::format(
            "the replay deadlocked: {} of {} operations never finished; the first is op {} ('{}', "
            "{} on rank {}, stream '{}')",
            graph_.size() - completed_, graph_.size(), id, graph_.label(op.label),
            to_string(op.kind), op.rank, graph_.streams()[op.stream].name));
      }
    }
  }
  SimResult result;
  result.timing = std::move(timing_);
  result.released_by = std::move(released_by_);
  for (const OpTiming& t : result.timing) result.makespan_s = std::max(result.makespan_s, t.end_s);
  result.activities = activities_;
  result.analytic_collectives = analytic_collectives_;
  result.flow_collectives = flow_collectives_;
  result.measured_table_collectives = measured_table_collectives_;
  result.flows = flows_;
  result.traffic_resolution_s = flow_log_.resolution_s();
  result.traffic = flow_log_.take_pairs();
  for (const auto& [key, use] : algorithm_uses_) result.algorithms.push_back(use);
  return result;
}

}  // namespace racksim::sim
