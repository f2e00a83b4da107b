// The replay's per-actor and per-collective state, shared by the files that implement Replay
// (sim/replay.cpp: streams and compute; sim/replay_collectives.cpp: collectives as they run).
// Private to sim/: nothing outside the engine includes it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <simgrid/s4u/Semaphore.hpp>

#include "sim/replay.h"

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
  // The wait for the last member's host (sim/host_skew.h): set when some member issued it right
  // after a host-bound kernel.
  double skew_s = 0;
};

}  // namespace racksim::sim
