// NCCL's double binary tree all-reduce as phases (see collective_algorithms.h).
#include <algorithm>
#include <map>

#include "sim/collective_algorithms.h"

namespace racksim::sim {
namespace {

// Chunks each tree's half of the data is pipelined in: enough to overlap the levels, few
// enough that per-step latency stays small.
constexpr int kTreeChunks = 8;
constexpr uint32_t kNone = UINT32_MAX;

struct Tree {
  std::vector<uint32_t> parent;                 // kNone at the root
  std::vector<std::vector<uint32_t>> children;  // per member
  std::vector<int> height;                      // leaves 0
  std::vector<int> depth;                       // root 0
  int root_height = 0;
  int max_depth = 0;
};

// Tree t of channel c: domains at mirrored positions for t = 1, a binary heap over the
// positions, and in each domain a chain rotated by c + t x half the domain, so the channels'
// trees leave every domain through different GPUs (and NICs), as NCCL's channels do.
Tree build_tree(const std::vector<std::vector<uint32_t>>& domains, size_t members, int t,
                size_t c) {
  Tree tree;
  tree.parent.assign(members, kNone);
  tree.children.assign(members, {});
  const size_t count = domains.size();
  std::vector<uint32_t> head(count);
  for (size_t p = 0; p < count; ++p) {
    const auto& chain = domains[t == 0 ? p : count - 1 - p];
    const size_t shift = c + (t == 0 ? 0 : chain.size() / 2);
    head[p] = chain[shift % chain.size()];
    for (size_t k = 1; k < chain.size(); ++k) {
      const uint32_t m = chain[(shift + k) % chain.size()];
      tree.parent[m] = chain[(shift + k - 1) % chain.size()];
    }
    if (p > 0) tree.parent[head[p]] = head[(p - 1) / 2];
  }
  uint32_t root = kNone;
  for (uint32_t m = 0; m < members; ++m) {
    if (tree.parent[m] == kNone) {
      root = m;
    } else {
      tree.children[tree.parent[m]].push_back(m);
    }
  }
  // Depths top-down (breadth-first), heights bottom-up (reverse of that order).
  tree.depth.assign(members, 0);
  tree.height.assign(members, 0);
  std::vector<uint32_t> order{root};
  for (size_t i = 0; i < order.size(); ++i) {
    for (uint32_t c : tree.children[order[i]]) {
      tree.depth[c] = tree.depth[order[i]] + 1;
      order.push_back(c);
    }
  }
  for (size_t i = order.size(); i-- > 0;) {
    const uint32_t m = order[i];
    for (uint32_t c : tree.children[m])
      tree.height[m] = std::max(tree.height[m], tree.height[c] + 1);
    tree.max_depth = std::max(tree.max_depth, tree.depth[m]);
  }
  tree.root_height = tree.height[root];
  return tree;
}

bool in_chunks(int j) {
  return j >= 0 && j < kTreeChunks;
}

// Reduce: a member sends chunk j to its parent in phase height + j (its children's chunk j came
// in earlier). Broadcast: the root has chunk j reduced after phase H - 1 + j; a member at
// depth d sends chunk j to its children in phase H + d + j.
class TreePlan final : public CollectivePlan {
 public:
  TreePlan(std::vector<Tree> trees, double chunk_bytes)
      : trees_(std::move(trees)), chunk_bytes_(chunk_bytes) {}

  int num_phases() const override {
    int phases = 0;
    for (const Tree& t : trees_)
      phases = std::max(phases, t.root_height + t.max_depth + kTreeChunks);
    return phases;
  }

  void sends(uint32_t m, int phase, std::vector<Transfer>* out) const override {
    for (const Tree& t : trees_) {
      if (t.parent[m] != kNone && in_chunks(phase - t.height[m])) {
        out->push_back({t.parent[m], chunk_bytes_});
      }
      if (in_chunks(phase - t.root_height - t.depth[m])) {
        for (uint32_t c : t.children[m]) out->push_back({c, chunk_bytes_});
      }
    }
  }

  uint32_t arrivals(uint32_t m, int phase) const override {
    uint32_t count = 0;
    for (const Tree& t : trees_) {
      for (uint32_t c : t.children[m]) count += in_chunks(phase - t.height[c]) ? 1 : 0;
      const uint32_t p = t.parent[m];
      if (p != kNone && in_chunks(phase - t.root_height - t.depth[p])) ++count;
    }
    return count;
  }

 private:
  std::vector<Tree> trees_;
  double chunk_bytes_;
};

}  // namespace

std::unique_ptr<CollectivePlan> make_tree_plan(double bytes, const CommShape& shape) {
  const size_t n = shape.domain.size();
  std::map<int, std::vector<uint32_t>> by_domain;
  for (uint32_t m = 0; m < n; ++m) by_domain[shape.domain[m]].push_back(m);
  std::vector<std::vector<uint32_t>> domains;
  for (auto& [d, members] : by_domain) {
    std::stable_sort(members.begin(), members.end(),
                     [&](uint32_t a, uint32_t b) { return shape.local[a] < shape.local[b]; });
    domains.push_back(members);
  }
  // One channel per member of the smallest domain, two trees per channel.
  size_t channels = n;
  for (const auto& d : domains) channels = std::min(channels, d.size());
  std::vector<Tree> trees;
  for (size_t c = 0; c < channels; ++c) {
    for (int t = 0; t < 2; ++t) trees.push_back(build_tree(domains, n, t, c));
  }
  return std::make_unique<TreePlan>(std::move(trees), bytes / (2.0 * channels * kTreeChunks));
}

}  // namespace racksim::sim
