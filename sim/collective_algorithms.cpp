#include "sim/collective_algorithms.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace racksim::sim {
namespace {

// Members ordered by their index inside the domain, then by member index.
std::vector<uint32_t> by_local_index(const CommShape& shape) {
  std::vector<uint32_t> order(shape.domain.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return shape.local[a] < shape.local[b]; });
  return order;
}

// Each member sends one transfer per phase to a fixed successor; disjoint cycles allowed.
class CyclePlan final : public CollectivePlan {
 public:
  CyclePlan(std::vector<uint32_t> next, int phases, double bytes, double max_bytes_per_s)
      : next_(std::move(next)), phases_(phases), bytes_(bytes), cap_(max_bytes_per_s) {}
  int num_phases() const override { return phases_; }
  void sends(uint32_t member, int, std::vector<Transfer>* out) const override {
    out->push_back({next_[member], bytes_, cap_});
  }
  uint32_t arrivals(uint32_t, int) const override { return 1; }
  bool phases_alike() const override { return true; }

 private:
  std::vector<uint32_t> next_;
  int phases_;
  double bytes_;
  double cap_;
};

class DirectPlan final : public CollectivePlan {
 public:
  DirectPlan(uint32_t n, int phases, double per_peer)
      : n_(n), phases_(phases), per_peer_(per_peer) {}
  int num_phases() const override { return phases_; }
  void sends(uint32_t member, int, std::vector<Transfer>* out) const override {
    for (uint32_t k = 1; k < n_; ++k) out->push_back({(member + k) % n_, per_peer_});
  }
  uint32_t arrivals(uint32_t, int) const override { return n_ - 1; }

 private:
  uint32_t n_;
  int phases_;
  double per_peer_;
};

// Phases of several stages run one after the other; each stage is a cycle plan.
class StagedPlan final : public CollectivePlan {
 public:
  void add(std::unique_ptr<CollectivePlan> stage) {
    if (stage->num_phases() == 0) return;
    first_phase_.push_back(num_phases());
    stages_.push_back(std::move(stage));
  }
  int num_phases() const override {
    return stages_.empty() ? 0 : first_phase_.back() + stages_.back()->num_phases();
  }
  void sends(uint32_t member, int phase, std::vector<Transfer>* out) const override {
    const size_t s = stage_of(phase);
    stages_[s]->sends(member, phase - first_phase_[s], out);
  }
  uint32_t arrivals(uint32_t member, int phase) const override {
    const size_t s = stage_of(phase);
    return stages_[s]->arrivals(member, phase - first_phase_[s]);
  }

 private:
  size_t stage_of(int phase) const {
    return static_cast<size_t>(std::upper_bound(first_phase_.begin(), first_phase_.end(), phase) -
                               first_phase_.begin() - 1);
  }
  std::vector<std::unique_ptr<CollectivePlan>> stages_;
  std::vector<int> first_phase_;
};

// Successors of the rings that join the members of each group in `groups` (member lists in
// ring order); a group of one sends to itself.
std::vector<uint32_t> cycles(const std::vector<std::vector<uint32_t>>& groups, size_t members) {
  std::vector<uint32_t> next(members);
  for (const auto& group : groups) {
    for (size_t i = 0; i < group.size(); ++i) next[group[i]] = group[(i + 1) % group.size()];
  }
  return next;
}

}  // namespace

std::unique_ptr<CollectivePlan> make_nvls_plan(double bytes, const CommShape& shape) {
  const auto n = static_cast<double>(shape.domain.size());
  const std::vector<uint32_t> order = by_local_index(shape);
  return std::make_unique<CyclePlan>(cycles({order}, order.size()), 1, bytes * (n + 1) / n,
                                     shape.nvls_bytes_per_s);
}

std::unique_ptr<CollectivePlan> make_direct_plan(CollectiveKind kind, double bytes, uint32_t n) {
  const int phases = kind == CollectiveKind::kAllReduce ? 2 : 1;
  return std::make_unique<DirectPlan>(n, phases, bytes / n);
}

std::unique_ptr<CollectivePlan> make_hierarchical_plan(double bytes, const CommShape& shape) {
  const size_t n = shape.domain.size();
  std::map<int, std::vector<uint32_t>> domains;  // members of each domain, by local index
  std::map<int, std::vector<uint32_t>> rails;    // k-th member of every domain, by domain
  for (uint32_t m : by_local_index(shape)) domains[shape.domain[m]].push_back(m);
  for (const auto& [d, members] : domains) {
    for (size_t k = 0; k < members.size(); ++k) rails[static_cast<int>(k)].push_back(members[k]);
  }
  std::vector<std::vector<uint32_t>> domain_groups, rail_groups;
  for (auto& [d, members] : domains) domain_groups.push_back(members);
  for (auto& [k, members] : rails) rail_groups.push_back(members);
  const auto per_domain = static_cast<double>(domain_groups.front().size());
  const auto count = static_cast<double>(domain_groups.size());
  const int local_steps = static_cast<int>(per_domain) - 1;
  auto plan = std::make_unique<StagedPlan>();
  const std::vector<uint32_t> inside = cycles(domain_groups, n);
  plan->add(std::make_unique<CyclePlan>(inside, local_steps, bytes / per_domain, 0));
  plan->add(std::make_unique<CyclePlan>(cycles(rail_groups, n), 2 * (static_cast<int>(count) - 1),
                                        bytes / (per_domain * count), 0));
  plan->add(std::make_unique<CyclePlan>(inside, local_steps, bytes / per_domain, 0));
  return plan;
}

}  // namespace racksim::sim
