#include "sim/collective_plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

#include "sim/collective_algorithms.h"

namespace racksim::sim {

namespace {

RingSet single_ring(uint32_t n) {
  RingSet rings;
  rings.next.assign(1, std::vector<uint32_t>(n));
  rings.prev.assign(1, std::vector<uint32_t>(n));
  for (uint32_t i = 0; i < n; ++i) {
    rings.next[0][i] = (i + 1) % n;
    rings.prev[0][i] = (i + n - 1) % n;
  }
  return rings;
}

void link_ring(const std::vector<uint32_t>& order, std::vector<uint32_t>* next,
               std::vector<uint32_t>* prev) {
  const size_t n = order.size();
  for (size_t i = 0; i < n; ++i) {
    (*next)[order[i]] = order[(i + 1) % n];
    (*prev)[order[(i + 1) % n]] = order[i];
  }
}

// Ring steps: in each phase every member sends one chunk to its ring successor on every channel.
class RingPlan final : public CollectivePlan {
 public:
  RingPlan(const RingSet& rings, int phases, double chunk_bytes)
      : rings_(rings), phases_(phases), chunk_bytes_(chunk_bytes) {}
  int num_phases() const override { return phases_; }
  void sends(uint32_t member, int, std::vector<Transfer>* out) const override {
    for (uint32_t c = 0; c < rings_.channels(); ++c)
      out->push_back({rings_.next[c][member], chunk_bytes_});
  }
  uint32_t arrivals(uint32_t, int) const override { return rings_.channels(); }
  bool phases_alike() const override { return true; }

 private:
  const RingSet& rings_;
  int phases_;
  double chunk_bytes_;
};

// Pipelined chain from member 0 (broadcast) or towards it (reduce): the data is cut into
// chunks; position p of the chain forwards chunk j in phase p + j.
class ChainPlan final : public CollectivePlan {
 public:
  ChainPlan(uint32_t n, double bytes, bool towards_root, int chunks)
      : n_(n), chunks_(chunks), chunk_bytes_(bytes / chunks), towards_root_(towards_root) {}
  int num_phases() const override { return static_cast<int>(n_) - 1 + chunks_ - 1; }
  void sends(uint32_t member, int phase, std::vector<Transfer>* out) const override {
    const uint32_t pos = position(member);
    if (pos + 1 >= n_) return;  // the end of the chain sends nothing
    const int chunk = phase - static_cast<int>(pos);
    if (chunk >= 0 && chunk < chunks_) out->push_back({member_at(pos + 1), chunk_bytes_});
  }
  uint32_t arrivals(uint32_t member, int phase) const override {
    const uint32_t pos = position(member);
    if (pos == 0) return 0;
    const int chunk = phase - static_cast<int>(pos - 1);
    return chunk >= 0 && chunk < chunks_ ? 1 : 0;
  }

 private:
  // Chain position: broadcast flows 0 -> 1 -> ... -> n-1; reduce flows n-1 -> ... -> 0.
  uint32_t position(uint32_t member) const { return towards_root_ ? n_ - 1 - member : member; }
  uint32_t member_at(uint32_t pos) const { return towards_root_ ? n_ - 1 - pos : pos; }
  uint32_t n_;
  int chunks_;
  double chunk_bytes_;
  bool towards_root_;
};

// All pairs at once (NCCL's grouped send/recv): every member sends bytes / n to each other one.
class AllToAllPlan final : public CollectivePlan {
 public:
  AllToAllPlan(uint32_t n, double bytes) : n_(n), per_peer_(bytes / n) {}
  int num_phases() const override { return 1; }
  void sends(uint32_t member, int, std::vector<Transfer>* out) const override {
    // Start with the next member so that not everybody hits member 0 first.
    for (uint32_t k = 1; k < n_; ++k) out->push_back({(member + k) % n_, per_peer_});
  }
  uint32_t arrivals(uint32_t, int) const override { return n_ - 1; }

 private:
  uint32_t n_;
  double per_peer_;
};

// All pairs at once with per-pair sizes from an EventGraph weights table (WeightedAllToAll):
// member i sends bytes x weight(i, j) to member j. Zero-byte transfers still arrive, so every
// member expects n - 1 arrivals.
class WeightedAllToAllPlan final : public CollectivePlan {
 public:
  WeightedAllToAllPlan(double bytes, const std::vector<double>& table)
      : bytes_(bytes),
        mode_(static_cast<WeightedAllToAll>(table[0])),
        n_(static_cast<uint32_t>(weighted_all_to_all_members(table))),
        weights_(table.begin() + 1, table.end()) {
    if (n_ == 0) throw std::logic_error("weighted all-to-all: a matrix table is not n x n");
  }
  int num_phases() const override { return 1; }
  void sends(uint32_t member, int, std::vector<Transfer>* out) const override {
    for (uint32_t k = 1; k < n_; ++k) {
      const uint32_t to = (member + k) % n_;
      out->push_back({to, bytes_ * weight(member, to)});
    }
  }
  uint32_t arrivals(uint32_t, int) const override { return n_ - 1; }

 private:
  double weight(uint32_t from, uint32_t to) const {
    switch (mode_) {
      case WeightedAllToAll::kByReceiver:
        return weights_[to];
      case WeightedAllToAll::kBySender:
        return weights_[from];
      case WeightedAllToAll::kMatrix:
        break;
    }
    return weights_[static_cast<size_t>(from) * n_ + to];
  }

  double bytes_;
  WeightedAllToAll mode_;
  uint32_t n_;
  std::vector<double> weights_;  // a share per member, or the n x n matrix
};

class EmptyPlan final : public CollectivePlan {
 public:
  int num_phases() const override { return 0; }
  void sends(uint32_t, int, std::vector<Transfer>*) const override {}
  uint32_t arrivals(uint32_t, int) const override { return 0; }
};

// Chunks of a pipelined chain: enough to fill the pipeline, not so many that latency dominates.
constexpr int kChainChunks = 8;

}  // namespace

RingSet build_rings(const std::vector<int>& domain_of_member,
                    const std::vector<int>& local_index_of_member) {
  const uint32_t n = static_cast<uint32_t>(domain_of_member.size());
  if (n == 0) return {};
  // Members per domain, in member order (which is ascending rank order).
  std::map<int, std::vector<uint32_t>> by_domain;
  for (uint32_t i = 0; i < n; ++i) by_domain[domain_of_member[i]].push_back(i);
  // As many channels as the smallest domain has members: a partial last domain (256 GPUs in
  // domains of 72) still gets one channel per rail it has, not a single ring.
  size_t g = n;
  for (const auto& d : by_domain) g = std::min(g, d.second.size());
  if (by_domain.size() == 1 || g == 1) return single_ring(n);

  std::vector<std::vector<uint32_t>> domains;
  for (auto& [domain, members] : by_domain) {
    // Order each domain's members by their GPU index so rotations follow rails.
    std::sort(members.begin(), members.end(), [&](uint32_t a, uint32_t b) {
      return local_index_of_member[a] < local_index_of_member[b];
    });
    domains.push_back(members);
  }
  RingSet rings;
  rings.next.assign(g, std::vector<uint32_t>(n));
  rings.prev.assign(g, std::vector<uint32_t>(n));
  std::vector<uint32_t> path;
  for (size_t c = 0; c < g; ++c) {
    // Channel c crosses between domains on two rails only, a = c and b = c + 1: even domains
    // are entered at a and left from b, odd ones entered at b and left from a, so every hop
    // between servers stays on one rail (with an odd number of domains the closing hop cannot).
    // Over all channels each NIC sends and receives one chunk per step.
    std::vector<uint32_t> order;
    order.reserve(n);
    for (size_t d = 0; d < domains.size(); ++d) {
      const size_t size = domains[d].size();
      path.assign({domains[d][c]});
      for (size_t k = 2; k < size; ++k) path.push_back(domains[d][(c + k) % size]);
      path.push_back(domains[d][(c + 1) % size]);
      if (d % 2 == 1) std::reverse(path.begin(), path.end());
      order.insert(order.end(), path.begin(), path.end());
    }
    link_ring(order, &rings.next[c], &rings.prev[c]);
  }
  return rings;
}

bool CommShape::single_domain() const {
  return std::all_of(domain.begin(), domain.end(), [&](int d) { return d == domain.front(); });
}

uint32_t CommShape::uniform_members_per_domain() const {
  std::map<int, uint32_t> count;
  for (int d : domain) ++count[d];
  if (count.empty()) return 0;
  const uint32_t first = count.begin()->second;
  for (const auto& [d, c] : count) {
    if (c != first) return 0;
  }
  return first;
}

std::string_view to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kAuto:
      return "auto";
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kNvls:
      return "nvls";
    case Algorithm::kHierarchical:
      return "hierarchical";
    case Algorithm::kDirect:
      return "direct";
    case Algorithm::kChain:
      return "chain";
  }
  return "unknown";
}

namespace {

Algorithm auto_algorithm(CollectiveKind kind, const CommShape& shape) {
  const bool one_domain = shape.single_domain();
  switch (kind) {
    case CollectiveKind::kAllReduce:
      if (one_domain && shape.nvls) return Algorithm::kNvls;
      return one_domain && shape.mesh ? Algorithm::kDirect : Algorithm::kRing;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return one_domain && shape.mesh ? Algorithm::kDirect : Algorithm::kRing;
    case CollectiveKind::kAllToAll:
      return Algorithm::kDirect;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      return Algorithm::kChain;
    case CollectiveKind::kBarrier:
      return Algorithm::kRing;
  }
  return Algorithm::kRing;
}

}  // namespace

Algorithm choose_algorithm(CollectiveKind kind, Algorithm requested, const CommShape& shape) {
  const Algorithm automatic = auto_algorithm(kind, shape);
  // All-to-all, broadcast and reduce have one decomposition whatever is asked for.
  if (automatic == Algorithm::kDirect && kind == CollectiveKind::kAllToAll) return automatic;
  if (automatic == Algorithm::kChain) return automatic;
  const bool all_reduce = kind == CollectiveKind::kAllReduce;
  switch (requested) {
    case Algorithm::kAuto:
      return automatic;
    case Algorithm::kNvls:
      return all_reduce && shape.nvls && shape.single_domain() ? Algorithm::kNvls
                                                               : Algorithm::kRing;
    case Algorithm::kHierarchical:
      return all_reduce && !shape.single_domain() && shape.uniform_members_per_domain() > 0
                 ? Algorithm::kHierarchical
                 : Algorithm::kRing;
    case Algorithm::kTree:
      return all_reduce ? Algorithm::kTree : Algorithm::kRing;
    case Algorithm::kDirect:
      return kind == CollectiveKind::kBarrier ? Algorithm::kRing : Algorithm::kDirect;
    default:
      return Algorithm::kRing;
  }
}

CommPlanner::CommPlanner(CommShape shape, Algorithm requested)
    : shape_(std::move(shape)),
      requested_(requested),
      rings_(build_rings(shape_.domain, shape_.local)) {}

std::unique_ptr<CollectivePlan> CommPlanner::plan(CollectiveKind kind, double bytes) const {
  return make_plan(kind, bytes, rings_, shape_, algorithm(kind));
}

std::unique_ptr<CollectivePlan> make_plan(CollectiveKind kind, double bytes, const RingSet& rings,
                                          const CommShape& shape, Algorithm algorithm) {
  const uint32_t n = rings.members();
  if (n <= 1 || kind == CollectiveKind::kBarrier) return std::make_unique<EmptyPlan>();
  switch (algorithm) {
    case Algorithm::kNvls:
      return make_nvls_plan(bytes, shape);
    case Algorithm::kHierarchical:
      return make_hierarchical_plan(bytes, shape);
    case Algorithm::kTree:
      return make_tree_plan(bytes, shape);
    case Algorithm::kDirect:
      if (kind != CollectiveKind::kAllToAll) return make_direct_plan(kind, bytes, n);
      break;
    default:
      break;
  }
  return make_plan(kind, bytes, rings);
}

std::unique_ptr<CollectivePlan> make_weighted_all_to_all_plan(double bytes,
                                                              const std::vector<double>& table) {
  if (table.size() < 2) throw std::logic_error("weighted all-to-all: empty weights table");
  return std::make_unique<WeightedAllToAllPlan>(bytes, table);
}

std::unique_ptr<CollectivePlan> make_plan(CollectiveKind kind, double bytes, const RingSet& rings) {
  const uint32_t n = rings.members();
  if (n <= 1 || kind == CollectiveKind::kBarrier) return std::make_unique<EmptyPlan>();
  const double chunk = bytes / (static_cast<double>(n) * rings.channels());
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return std::make_unique<RingPlan>(rings, 2 * (static_cast<int>(n) - 1), chunk);
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return std::make_unique<RingPlan>(rings, static_cast<int>(n) - 1, chunk);
    case CollectiveKind::kAllToAll:
      return std::make_unique<AllToAllPlan>(n, bytes);
    case CollectiveKind::kBroadcast:
      return std::make_unique<ChainPlan>(n, bytes, false, kChainChunks);
    case CollectiveKind::kReduce:
      return std::make_unique<ChainPlan>(n, bytes, true, kChainChunks);
    case CollectiveKind::kBarrier:
      break;
  }
  throw std::logic_error("make_plan: unknown collective kind");
}

}  // namespace racksim::sim
