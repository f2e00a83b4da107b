#include "workloads/moe/routing_rule.h"

#include <algorithm>
#include <stdexcept>

namespace racksim {

RoutingRule routing_rule(const config::Model& model) {
  RoutingRule rule;
  rule.experts = model.num_experts();
  rule.top_k = model.experts_per_token();
  if (model.moe_expert_groups() > 0) {
    rule.groups = model.moe_expert_groups();
    rule.groups_per_token =
        model.moe_groups_per_token() > 0 ? model.moe_groups_per_token() : rule.groups;
  }
  return rule;
}

namespace {

// The probability that k experts drawn without replacement from `pool` all miss `held` of them:
// C(pool - held, k) / C(pool, k).
double miss_probability(int64_t pool, int64_t held, int64_t k) {
  double p = 1;
  for (int64_t t = 0; t < k; ++t) {
    if (pool - held - t <= 0) return 0;
    p *= static_cast<double>(pool - held - t) / static_cast<double>(pool - t);
  }
  return p;
}

}  // namespace

double reach_probability(const RoutingRule& rule, const std::vector<int64_t>& in_group) {
  const int64_t chosen = rule.groups_per_token;
  const int64_t group_size = rule.experts / rule.groups;
  const int64_t per_group = rule.top_k / chosen;  // experts a chosen group gives the token
  // Over the uniformly chosen sets of groups, the mean product of each chosen group's chance to
  // miss the set: the elementary symmetric sums of the misses against those of ones.
  std::vector<double> missed(static_cast<size_t>(chosen + 1), 0.0);
  std::vector<double> sets(static_cast<size_t>(chosen + 1), 0.0);
  missed[0] = sets[0] = 1;
  for (const int64_t held : in_group) {
    const double miss = miss_probability(group_size, held, per_group);
    for (int64_t c = chosen; c >= 1; --c) {
      missed[c] += missed[c - 1] * miss;
      sets[c] += sets[c - 1];
    }
  }
  return 1 - missed[chosen] / sets[chosen];
}

int landing_rank(int ranks, int ranks_per_domain, int domain, int rail) {
  const int first = domain * ranks_per_domain;
  return first + rail % std::min(ranks_per_domain, ranks - first);
}

std::vector<double> rule_dedup_dispatch_matrix(const ExpertPlacementMap& map,
                                               const RoutingRule& rule, int ranks_per_domain) {
  const int n = map.ranks;
  const int domains = (n + ranks_per_domain - 1) / ranks_per_domain;
  const int64_t group_size = rule.experts / rule.groups;
  // Per rank and per domain: how many of each group's experts it holds.
  std::vector<std::vector<int64_t>> rank_groups(n, std::vector<int64_t>(rule.groups, 0));
  std::vector<std::vector<int64_t>> domain_groups(domains, std::vector<int64_t>(rule.groups, 0));
  for (size_t e = 0; e < map.share.size(); ++e) {
    const auto holder =
        std::find_if(map.share[e].begin(), map.share[e].end(), [](double s) { return s > 0; });
    if (holder == map.share[e].end() || *holder < 1)
      throw std::logic_error("rule dedup dispatch: an expert without a single holder");
    const int rank = static_cast<int>(holder - map.share[e].begin());
    const int64_t group = static_cast<int64_t>(e) / group_size;
    ++rank_groups[rank][group];
    ++domain_groups[rank / ranks_per_domain][group];
  }
  std::vector<double> reach_rank(n);
  std::vector<double> reach_domain(domains);
  for (int j = 0; j < n; ++j) reach_rank[j] = reach_probability(rule, rank_groups[j]);
  for (int d = 0; d < domains; ++d) reach_domain[d] = reach_probability(rule, domain_groups[d]);

  const auto un = static_cast<size_t>(n);
  std::vector<double> matrix(un * un, 0.0);
  auto add = [&](int from, int to, double copies) {
    if (from != to) matrix[static_cast<size_t>(from) * un + static_cast<size_t>(to)] += copies;
  };
  auto domain_end = [&](int d) { return std::min(n, (d + 1) * ranks_per_domain); };
  for (int sender = 0; sender < n; ++sender) {
    const int home = sender / ranks_per_domain;
    const int rail = sender % ranks_per_domain;
    for (int d = 0; d < domains; ++d) {
      const int from = d == home ? sender : landing_rank(n, ranks_per_domain, d, rail);
      if (d != home) add(sender, from, reach_domain[d]);
      for (int j = d * ranks_per_domain; j < domain_end(d); ++j) add(from, j, reach_rank[j]);
    }
  }
  for (double& m : matrix) m /= static_cast<double>(rule.top_k);
  return matrix;
}

}  // namespace racksim
