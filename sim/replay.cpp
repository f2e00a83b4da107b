#include "sim/replay.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "graph/graph_check.h"
#include "sim/actor_limit.h"
#include "sim/aggregated_plan.h"

namespace racksim::sim {

namespace s4u = simgrid::s4u;

struct Replay::StreamActor {
  RankId rank = 0;
  StreamId stream = 0;
  std::vector<OpId> ops;
  OpId waiting_for = kNoOp;  // the operation whose readiness this actor is blocked on
  s4u::SemaphorePtr wake;
  // When the stream's last operation ended. It runs ahead of SimGrid's clock while the stream
  // takes time that nothing contends for (see `lazy_compute`); an operation that needs the
  // network first sleeps until then.
  double clock = 0;
  // The stream's kernels take their modelled duration whatever else runs: host work, or the
  // only GPU compute stream of its rank. They then advance `clock` without a SimGrid activity.
  bool lazy_compute = false;
};

// One instance of a collective while its members run it.
struct Replay::CollectiveRun {
  std::unique_ptr<CollectivePlan> plan;
  const std::vector<RankId>* member_ranks = nullptr;
  uint32_t members = 0;
  uint32_t joined = 0;
  uint32_t finished = 0;
  bool started = false;
  std::vector<size_t> actor_of_member;
  std::vector<int32_t> waiting_phase;  // phase a member is blocked on, or -1
  std::vector<uint32_t> arrived;       // [member * phases + phase]
  int phases = 0;
  int extra_latency_steps = 0;  // aggregated fidelity: ring steps folded into one flow
  uint32_t expected = 0;        // members that join (all, or the simulated ones when folded)
  bool folded = false;          // some members are mirrors of simulated ones
  double start_s = 0;           // the last member's arrival
  double analytic_s = -1;       // >= 0: the collective takes this long, without flows
  const LinearCost* analytic_cost = nullptr;  // set with analytic_s
  // >= 0: the time measured for this collective (hardware.collectives.measured_table), base
  // latency included. Timed analytically it is the duration; run as flows, the least it takes.
  double measured_s = -1;
  double bytes = 0;
};

namespace {

uint64_t run_key(const Op& op) {
  return (static_cast<uint64_t>(op.peer) << 32) | op.tag;
}

}  // namespace

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

const CommPlanner& Replay::planner_for(CommId comm) {
  if (!planners_[comm]) {
    const auto& members = graph_.communicator(comm);
    CommShape shape;
    for (RankId r : members) {
      shape.domain.push_back(placement_.domain[r]);
      shape.local.push_back(placement_.local_index[r]);
    }
    shape.nvls = placement_.nvls;
    shape.nvls_bytes_per_s = placement_.nvls_bytes_per_s;
    shape.mesh = placement_.mesh;
    planners_[comm] = std::make_unique<CommPlanner>(std::move(shape), options_.algorithm);
  }
  return *planners_[comm];
}

Replay::CollectiveRun& Replay::join(OpId op, uint32_t* member, size_t actor) {
  const Op& o = graph_.op(op);
  const auto& members = graph_.communicator(o.peer);
  auto& slot = runs_[run_key(o)];
  if (!slot) {
    slot = std::make_unique<CollectiveRun>();
    CollectiveRun& run = *slot;
    run.members = static_cast<uint32_t>(members.size());
    run.member_ranks = &members;
    run.bytes = o.amount;
    run.expected = run.members;
    if (!options_.simulated_ranks.empty()) {
      run.expected = static_cast<uint32_t>(
          std::count_if(members.begin(), members.end(), [&](RankId r) { return simulated(r); }));
      run.folded = run.expected < run.members;
    }
    run.actor_of_member.assign(run.members, 0);
  }
  *member = static_cast<uint32_t>(std::lower_bound(members.begin(), members.end(), o.rank) -
                                  members.begin());
  slot->actor_of_member[*member] = actor;
  ++slot->joined;
  return *slot;
}

void Replay::execute_collective(size_t index, OpId op, double ready_s) {
  StreamActor& actor = *actors_[index];
  // ANALYTIC collectives take no flows: they can be timed from the members' clocks alone.
  // Anything else meets on SimGrid's clock, where flows and link reservations live.
  const bool lazy = options_.fidelity == config::Simulation::ANALYTIC;
  const double arrival = lazy ? ready_s : sleep_until(ready_s);
  const Op& o = graph_.op(op);
  uint32_t member = 0;
  CollectiveRun& run = join(op, &member, index);
  run.start_s = std::max(run.start_s, arrival);
  if (run.joined < run.expected) {
    // Wait for the last member: NCCL kernels on a communicator meet before data moves.
    while (!run.started) {
      actor.waiting_for = op;
      actor.wake->acquire();
    }
  } else {
    choose_execution(run, o);
    run.started = true;
    for (uint32_t m = 0; m < run.members; ++m) {
      if (m != member && (run.expected == run.members || simulated((*run.member_ranks)[m]))) {
        actors_[run.actor_of_member[m]]->wake->release();
      }
    }
  }
  actor.waiting_for = kNoOp;
  const double delay = collective_delay_s(run, member, o.rank);
  if (run.analytic_s >= 0) {
    // No flows: the collective ends its duration after the last arrival, without a sleep.
    actor.clock = run.start_s + delay;
    log_analytic_traffic(run, member, actor.clock);
  } else {
    if (delay > 0) {
      ++activities_;
      s4u::this_actor::sleep_for(delay);
    }
    run_phases(run, member, actor);
    if (run.measured_s >= 0) last_until_measured(run.start_s, run.measured_s);
    actor.clock = s4u::Engine::get_clock();
  }
  const uint64_t key = run_key(o);
  if (++run.finished == run.expected) runs_.erase(key);  // `run` is gone after this
  complete(op, arrival, actor.clock);
}

// The call's fixed latency, and under AGGREGATED fidelity the latencies of the ring steps
// folded into one flow per peer, are one sleep before the data moves; an analytic collective
// adds its whole duration. A measured collective's time holds its call's latency: timed
// analytically it is the whole delay, and its flows start without the base latency.
double Replay::collective_delay_s(const CollectiveRun& run, uint32_t member, RankId rank) {
  double delay = run.members > 1 && run.measured_s < 0 ? options_.collective_base_latency_s : 0;
  if (run.analytic_s >= 0) return delay + run.analytic_s;
  if (run.extra_latency_steps > 0) {
    std::vector<Transfer> out;
    run.plan->sends(member, 0, &out);
    double latency = 0;
    for (const Transfer& t : out) {
      latency =
          std::max(latency, fabric_.latency_s(fabric_.route(rank, (*run.member_ranks)[t.to])));
    }
    delay += run.extra_latency_steps * latency;
  }
  return delay;
}

void Replay::run_phases(CollectiveRun& run, uint32_t member, StreamActor& actor) {
  s4u::Host* from = placement_.host[(*run.member_ranks)[member]];
  std::vector<Transfer> sends;
  std::vector<s4u::CommPtr> comms;
  std::vector<uint32_t> peers;
  std::vector<double> flow_bytes;
  std::vector<const std::vector<topo::Hop>*> flow_hops;
  for (int phase = 0; phase < run.phases; ++phase) {
    sends.clear();
    run.plan->sends(member, phase, &sends);
    comms.clear();
    peers.clear();
    flow_bytes.clear();
    flow_hops.clear();
    const double phase_start = s4u::Engine::get_clock();
    for (const Transfer& t : sends) {
      const uint64_t bytes = whole_bytes(t.bytes);
      s4u::Host* to = placement_.host[(*run.member_ranks)[t.to]];
      if (bytes == 0 || from == to) {
        arrive(run, t.to, phase);
        continue;
      }
      ++activities_;
      ++flows_;
      // Rate-capped (NVLS) flows leave from the GPU's NVLS host, which SimGrid slows down.
      s4u::Host* source = t.max_bytes_per_s > 0 && placement_.nvls_host[(*run.member_ranks)[member]]
                              ? placement_.nvls_host[(*run.member_ranks)[member]]
                              : from;
      comms.push_back(s4u::Comm::sendto_async(source, to, bytes));
      peers.push_back(t.to);
      flow_bytes.push_back(static_cast<double>(bytes));
      if (link_activity_) {
        flow_hops.push_back(&fabric_.route((*run.member_ranks)[member], (*run.member_ranks)[t.to]));
        link_activity_->add_flow(*flow_hops.back(), +1);
      }
    }
    while (!comms.empty()) {
      const auto done = static_cast<size_t>(s4u::Comm::wait_any(comms));
      flow_log_.record((*run.member_ranks)[member], (*run.member_ranks)[peers[done]],
                       flow_bytes[done], phase_start, s4u::Engine::get_clock());
      arrive(run, peers[done], phase);
      if (link_activity_) {
        link_activity_->add_flow(*flow_hops[done], -1);
        flow_hops.erase(flow_hops.begin() + static_cast<std::ptrdiff_t>(done));
      }
      comms.erase(comms.begin() + static_cast<std::ptrdiff_t>(done));
      peers.erase(peers.begin() + static_cast<std::ptrdiff_t>(done));
      flow_bytes.erase(flow_bytes.begin() + static_cast<std::ptrdiff_t>(done));
    }
    const size_t slot = static_cast<size_t>(member) * run.phases + phase;
    while (run.arrived[slot] < run.plan->arrivals(member, phase)) {
      run.waiting_phase[member] = phase;
      actor.wake->acquire();
    }
    run.waiting_phase[member] = -1;
  }
}

// What an analytic collective would have sent, for the traffic summary: each of the member's
// peers over the collective's data time, which ends now.
void Replay::log_analytic_traffic(const CollectiveRun& run, uint32_t member, double end_s) {
  const double start_s = end_s - run.analytic_s;
  for (const PeerShare& send : run.analytic_cost->sends[member]) {
    flow_log_.record((*run.member_ranks)[member], (*run.member_ranks)[send.to],
                     send.bytes_per_byte * run.bytes, start_s, end_s);
  }
}

bool Replay::simulated(RankId rank) const {
  return options_.simulated_ranks.empty() || options_.simulated_ranks[rank];
}

const LinearCost& Replay::analytic_cost_of(const Op& op) {
  const uint32_t weights = op.collective == CollectiveKind::kAllToAll ? op.weights : 0;
  if (const LinearCost* cost = analytic_costs_.find(op.peer, op.collective, weights)) return *cost;
  // Every plan scales with its bytes: cost it for one byte.
  const auto unit_plan = weights != 0 ? make_weighted_all_to_all_plan(1.0, graph_.weights(weights))
                                      : planner_for(op.peer).plan(op.collective, 1.0);
  return analytic_costs_.insert(op.peer, op.collective, weights,
                                analytic_cost(*unit_plan, graph_.communicator(op.peer), fabric_));
}

// Decided when the last member arrives: analytic (ANALYTIC; AUTO on idle links; folded
// collectives), or flows, one per peer under AGGREGATED and AUTO.
void Replay::choose_execution(CollectiveRun& run, const Op& op) {
  note_algorithm(run, op);
  const auto fidelity = options_.fidelity;
  const double now = s4u::Engine::get_clock();
  if (const auto* curve = measured_curve(op)) {
    run.measured_s = topo::measured_time_s(*curve, run.bytes);
    ++measured_table_collectives_;
  }
  if (run.members > 1 && (run.folded || fidelity == config::Simulation::ANALYTIC ||
                          fidelity == config::Simulation::AUTO)) {
    const LinearCost& cost = analytic_cost_of(op);
    if (run.folded || fidelity == config::Simulation::ANALYTIC ||
        link_activity_->idle(cost.links, now)) {
      time_analytically(run, cost, now);
      return;
    }
  }
  ++flow_collectives_;
  run.plan = op.weights != 0 && op.collective == CollectiveKind::kAllToAll
                 ? make_weighted_all_to_all_plan(run.bytes, graph_.weights(op.weights))
                 : planner_for(op.peer).plan(op.collective, run.bytes);
  const bool aggregate =
      fidelity == config::Simulation::AGGREGATED || fidelity == config::Simulation::AUTO;
  if (aggregate && run.plan->num_phases() > 1) {
    run.extra_latency_steps = run.plan->num_phases() - 1;
    run.plan = std::make_unique<AggregatedPlan>(*run.plan, run.members);
  }
  run.phases = run.plan->num_phases();
  run.waiting_phase.assign(run.members, -1);
  run.arrived.assign(static_cast<size_t>(run.members) * run.phases, 0);
}

// No flows: the collective lasts its measured time, or its cost's duration after the call's base
// latency, and under AUTO holds its links that long.
void Replay::time_analytically(CollectiveRun& run, const LinearCost& cost, double now) {
  const bool measured = run.measured_s >= 0;
  run.analytic_s = measured ? run.measured_s : cost.duration_s(run.bytes);
  run.analytic_cost = &cost;
  if (link_activity_) {
    const double latency_s = measured ? 0 : options_.collective_base_latency_s;
    link_activity_->reserve(cost.links, now + latency_s + run.analytic_s);
  }
  ++analytic_collectives_;
}

// Counted once per collective, when its last member arrives, for the report.
void Replay::note_algorithm(const CollectiveRun& run, const Op& op) {
  if (run.members <= 1 || op.collective == CollectiveKind::kBarrier) return;
  const Algorithm algorithm = op.weights != 0 && op.collective == CollectiveKind::kAllToAll
                                  ? Algorithm::kDirect
                                  : planner_for(op.peer).algorithm(op.collective);
  AlgorithmUse& use = algorithm_uses_[{op.collective, op.dim, algorithm}];
  use.kind = op.collective;
  use.dim = op.dim;
  use.algorithm = algorithm;
  ++use.collectives;
  use.max_members = std::max(use.max_members, run.members);
}

void Replay::arrive(CollectiveRun& run, uint32_t member, int phase) {
  const size_t slot = static_cast<size_t>(member) * run.phases + phase;
  ++run.arrived[slot];
  if (run.waiting_phase[member] == phase &&
      run.arrived[slot] >= run.plan->arrivals(member, phase)) {
    run.waiting_phase[member] = -1;
    actors_[run.actor_of_member[member]]->wake->release();
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
