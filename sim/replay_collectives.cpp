// Replay's collectives: members join a run of one collective, its execution is chosen when the
// last arrives (analytic, measured, or flows per phase), and each member leaves when its phases
// are done.
#include <algorithm>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "sim/aggregated_plan.h"
#include "sim/host_skew.h"
#include "sim/replay_state.h"

namespace racksim::sim {

namespace {

uint64_t run_key(const Op& op) {
  return (static_cast<uint64_t>(op.peer) << 32) | op.tag;
}

}  // namespace

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
  if (follows_host_bound_kernel(op)) run.skew_s = host_skew_s(run.members);
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
    if (run.measured_s >= 0) last_until_measured(run.start_s + run.skew_s, run.measured_s);
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
  delay += run.skew_s;
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

bool Replay::follows_host_bound_kernel(OpId op) const {
  const OpId by = released_by_[op];
  if (by == kNoOp || options_.collective_host_skew_s <= 0) return false;
  const Op& kernel = graph_.op(by);
  return kernel.kind == OpKind::kCompute &&
         compute_.timed(kernel, graph_.shape(kernel.shape)).bound == KernelBound::kHost;
}

double Replay::host_skew_s(uint32_t members) {
  if (skew_by_members_.size() <= members) skew_by_members_.resize(members + 1, -1);
  double& skew = skew_by_members_[members];
  if (skew < 0) skew = collective_host_skew_s(options_.collective_host_skew_s, members);
  return skew;
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
}  // namespace racksim::sim
