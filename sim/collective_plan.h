// Collectives decomposed NCCL-style into point-to-point transfers.
//
// A plan is a sequence of phases. In each phase every member sends some transfers and waits
// for the transfers addressed to it; a member starts phase k+1 when its own phase-k sends have
// been delivered and its phase-k arrivals are in. Ring steps, tree pipelines and all-to-all
// bursts are all expressed this way, so contention between the flows of one collective, and
// with any other traffic, is simulated by the network model rather than assumed.
//
// Members are indices 0..n-1 into the communicator's ascending member list.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "graph/event_graph.h"

namespace racksim::sim {

struct Transfer {
  uint32_t to = 0;  // member index
  double bytes = 0;
  // > 0: the flow runs at most this fast (NVLS's port rate), below what the links allow. The
  // engine sends it from the GPU's NVLS host, which the platform caps at this rate.
  double max_bytes_per_s = 0;
};

// The algorithms a collective can run (hardware.collectives.algorithm).
enum class Algorithm : uint8_t {
  kAuto,
  kRing,          // rings along NVLink, then rails
  kTree,          // all-reduce: chains in each domain, a double binary tree across domains
  kNvls,          // all-reduce: NVLink SHARP in-switch reduction, inside one domain
  kHierarchical,  // all-reduce: domain reduce-scatter, all-reduce per rail, domain all-gather
  kDirect,        // every member straight to every other (all-to-all; a mesh's collectives)
  kChain,         // broadcast and reduce: a pipelined chain
};

std::string_view to_string(Algorithm algorithm);

// Ring orders for a communicator. With members spread over several scale-up domains (servers),
// NCCL runs one ring per channel and spreads the channels over all NICs; each ring leaves a
// server on the rail the next server is entered on, so inter-server hops stay on one rail.
struct RingSet {
  // next[c][i] / prev[c][i]: neighbours of member i on channel c. A channel may also be a set
  // of disjoint rings (one per domain, or one per rail).
  std::vector<std::vector<uint32_t>> next;
  std::vector<std::vector<uint32_t>> prev;
  uint32_t members() const { return next.empty() ? 0 : static_cast<uint32_t>(next[0].size()); }
  uint32_t channels() const { return static_cast<uint32_t>(next.size()); }
};

// `domain_of_member[i]`: the scale-up domain (server, NVL72 rack) of member i;
// `local_index_of_member[i]`: its GPU index inside that domain. One channel when all members
// share a domain or a domain has one member; otherwise one channel per member of the smallest
// domain.
RingSet build_rings(const std::vector<int>& domain_of_member,
                    const std::vector<int>& local_index_of_member);

// Where a communicator's members sit, and what their scale-up hardware can do.
struct CommShape {
  std::vector<int> domain;      // scale-up domain of each member
  std::vector<int> local;       // GPU index of each member inside its domain
  bool nvls = false;            // the domains' switches reduce in-network
  double nvls_bytes_per_s = 0;  // per GPU port during an NVLS all-reduce
  bool mesh = false;            // the domains are full meshes (no switch)

  bool single_domain() const;
  // Members per domain when every domain holds the same number (> 0), else 0.
  uint32_t uniform_members_per_domain() const;
};

class CollectivePlan {
 public:
  virtual ~CollectivePlan() = default;
  virtual int num_phases() const = 0;
  // Appends member's sends of `phase` to `out`.
  virtual void sends(uint32_t member, int phase, std::vector<Transfer>* out) const = 0;
  // How many transfers member receives in `phase`.
  virtual uint32_t arrivals(uint32_t member, int phase) const = 0;
  // True when every phase sends the same transfers (ring steps): the analytic model then costs
  // one phase.
  virtual bool phases_alike() const { return false; }
};

// The algorithm a collective of `kind` runs when `requested` is asked for on `shape`.
// AUTO picks as NCCL roughly would: an all-reduce inside one NVLS-capable domain uses NVLS,
// collectives inside one mesh go direct over the pairwise links, all-to-all is direct,
// broadcast and reduce are chains, everything else runs rings. A requested algorithm that does
// not apply (NVLS across domains or without NVLS hardware, HIERARCHICAL inside one domain or
// with uneven domains, TREE or NVLS for anything but all-reduce) falls back to rings.
Algorithm choose_algorithm(CollectiveKind kind, Algorithm requested, const CommShape& shape);

// One communicator's plans: the rings are built once, each collective gets its own plan.
class CommPlanner {
 public:
  CommPlanner(CommShape shape, Algorithm requested);
  Algorithm algorithm(CollectiveKind kind) const {
    return choose_algorithm(kind, requested_, shape_);
  }
  std::unique_ptr<CollectivePlan> plan(CollectiveKind kind, double bytes) const;
  const RingSet& rings() const { return rings_; }

 private:
  CommShape shape_;
  Algorithm requested_;
  RingSet rings_;
};

// The plan of `algorithm` (as chosen by choose_algorithm) over `rings` (build_rings of the
// shape): ring all-reduce is 2(n-1) steps of bytes / n split over the channels, all-gather and
// reduce-scatter n-1 steps; a barrier is nothing (the rendezvous is the barrier).
std::unique_ptr<CollectivePlan> make_plan(CollectiveKind kind, double bytes, const RingSet& rings,
                                          const CommShape& shape, Algorithm algorithm);

// The ring plan alone (kept for callers that have only rings).
std::unique_ptr<CollectivePlan> make_plan(CollectiveKind kind, double bytes, const RingSet& rings);

// An uneven all-to-all (a skewed MoE routing): `table` is an EventGraph weights table (its
// first entry the WeightedAllToAll mode, then one share per member or an n x n matrix). Under
// kByReceiver member i sends bytes x share[j] to member j; under kBySender it sends
// bytes x share[i] to every member; under kMatrix bytes x m[i n + j] to member j.
std::unique_ptr<CollectivePlan> make_weighted_all_to_all_plan(double bytes,
                                                              const std::vector<double>& table);

}  // namespace racksim::sim
