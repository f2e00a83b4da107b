// Collectives decomposed NCCL-style into point-to-point transfers.
//
// A plan is a sequence of phases. In each phase every member sends some transfers and waits
// for the transfers addressed to it; a member starts phase k+1 when its own phase-k sends have
// been delivered and its phase-k arrivals are in. Ring steps and all-to-all bursts are both
// expressed this way, so contention between the flows of one collective, and with any other
// traffic, is simulated by the network model rather than assumed.
//
// Members are indices 0..n-1 into the communicator's ascending member list.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "workloads/event_graph.h"

namespace racksim::sim {

struct Transfer {
  uint32_t to = 0;  // member index
  double bytes = 0;
};

// Ring orders for a communicator. With members spread over several scale-up domains (servers),
// NCCL runs one ring per channel and spreads the channels over all NICs; each ring leaves a
// server on the rail the next server is entered on, so inter-server hops stay on one rail.
struct RingSet {
  // next[c][i] / prev[c][i]: neighbours of member i on channel c.
  std::vector<std::vector<uint32_t>> next;
  std::vector<std::vector<uint32_t>> prev;
  uint32_t members() const { return next.empty() ? 0 : static_cast<uint32_t>(next[0].size()); }
  uint32_t channels() const { return static_cast<uint32_t>(next.size()); }
};

// `domain_of_member[i]`: the scale-up domain (server) of member i; `local_index_of_member[i]`:
// its GPU index inside that domain. One channel when all members share a domain or the domains
// hold different numbers of members; otherwise one channel per member of a domain.
RingSet build_rings(const std::vector<int>& domain_of_member,
                    const std::vector<int>& local_index_of_member);

class CollectivePlan {
 public:
  virtual ~CollectivePlan() = default;
  virtual int num_phases() const = 0;
  // Appends member's sends of `phase` to `out`.
  virtual void sends(uint32_t member, int phase, std::vector<Transfer>* out) const = 0;
  // How many transfers member receives in `phase`.
  virtual uint32_t arrivals(uint32_t member, int phase) const = 0;
};

// The plan NCCL would run: ring for all-reduce, all-gather and reduce-scatter (2(n-1) or n-1
// steps of bytes / n split over the channels), a pipelined chain for broadcast and reduce, all
// pairs at once for all-to-all, nothing for a barrier (the rendezvous is the barrier).
std::unique_ptr<CollectivePlan> make_plan(CollectiveKind kind, double bytes, const RingSet& rings);

}  // namespace racksim::sim
