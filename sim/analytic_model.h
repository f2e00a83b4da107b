// Collective durations without flows, for ANALYTIC and AUTO fidelity and for folded replicas.
//
// A plan's phase moves its transfers at once; with nothing else on the wire it lasts as long
// as its slowest route's latency plus its most loaded link's bytes over that link's bandwidth
// (and a rate-capped NVLS transfer's bytes over its cap). Ring steps use disjoint links, so
// this is their alpha-beta closed form; for an all-to-all it is the bottleneck bound that
// max-min sharing reaches when the flows of a link are alike. A plan's phases scale with its
// bytes, so one collective costs latency_s + bytes x seconds_per_byte, computed once per
// (communicator, kind, weights).
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "graph/event_graph.h"
#include "sim/collective_plan.h"
#include "topologies/routing.h"
#include "topologies/topology_graph.h"

namespace racksim::sim {

// A direction of a topology edge: edge index x 2 + (1 when crossed source -> target).
using DirectedLink = uint32_t;

inline DirectedLink directed_link(const topo::Hop& hop) {
  return hop.edge * 2 + (hop.forward ? 1 : 0);
}

// Routes between ranks on the real fabric.
class FabricView {
 public:
  FabricView(const topo::Topology& topology, topo::Router& router,
             std::vector<uint32_t> rank_to_gpu);
  const std::vector<topo::Hop>& route(RankId from, RankId to);
  // Between a rank's GPU and a CPU socket of its server.
  const std::vector<topo::Hop>& copy_route(RankId rank, uint32_t socket);
  double latency_s(const std::vector<topo::Hop>& hops) const { return router_.latency_s(hops); }
  double bytes_per_s(DirectedLink link) const;
  size_t num_directed_links() const { return topology_.edges.size() * 2; }
  uint32_t gpu_of(RankId rank) const { return rank_to_gpu_[rank]; }

 private:
  const topo::Topology& topology_;
  topo::Router& router_;
  std::vector<uint32_t> rank_to_gpu_;
};

// Bytes a member sends to one peer over a whole collective, per byte of the collective.
struct PeerShare {
  uint32_t to = 0;  // member index
  double bytes_per_byte = 0;
};

// A collective's cost on an idle fabric: duration = latency_s + bytes x seconds_per_byte.
struct LinearCost {
  double latency_s = 0;
  double seconds_per_byte = 0;
  std::vector<DirectedLink> links;  // every link its transfers cross, sorted, unique
  // [member]: what it sends to each peer on another GPU, so that an analytic collective still
  // counts its traffic per rank pair (crossing shares, link summaries) though it runs no flows.
  std::vector<std::vector<PeerShare>> sends;
  double duration_s(double bytes) const {
    return bytes > 0 ? latency_s + bytes * seconds_per_byte : 0;
  }
};

// The cost of `plan`, built for ONE byte, run by `member_ranks` (the communicator).
LinearCost analytic_cost(const CollectivePlan& unit_plan, const std::vector<RankId>& member_ranks,
                         FabricView& fabric);

// Costs by (communicator, kind, weights table), computed on first use.
class AnalyticCosts {
 public:
  const LinearCost* find(CommId comm, CollectiveKind kind, uint32_t weights) const;
  const LinearCost& insert(CommId comm, CollectiveKind kind, uint32_t weights, LinearCost cost);

 private:
  std::map<std::tuple<CommId, int, uint32_t>, LinearCost> costs_;
};

// Which links carry traffic now, for AUTO: flows the replay started and not yet finished, and
// analytic collectives until their end.
class LinkActivity {
 public:
  explicit LinkActivity(size_t directed_links)
      : flows_(directed_links, 0), busy_until_s_(directed_links, 0) {}
  void add_flow(const std::vector<topo::Hop>& hops, int delta);
  bool idle(const std::vector<DirectedLink>& links, double now_s) const;
  void reserve(const std::vector<DirectedLink>& links, double until_s);

 private:
  std::vector<int32_t> flows_;
  std::vector<double> busy_until_s_;
};

}  // namespace racksim::sim
