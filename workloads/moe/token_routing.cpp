#include "workloads/moe/token_routing.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/error.h"
#include "common/input_file.h"
#include "proto/scale_up_domain.h"
#include "workloads/moe/expert_routing.h"

namespace racksim {

namespace {

std::vector<int> parse_token(const std::string& line, const std::string& path, int number,
                             const std::string& field, int64_t experts) {
  std::string text = line;
  std::replace(text.begin(), text.end(), ',', ' ');
  std::istringstream fields(text);
  std::vector<int> token;
  for (std::string word; fields >> word;) {
    size_t used = 0;
    long long id = -1;
    try {
      id = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || id < 0 || id >= experts) {
      throw InputError({path, number, 0}, field,
                       fmt::format("'{}' is not an expert id in [0, {})", word, experts));
    }
    if (std::find(token.begin(), token.end(), id) != token.end()) {
      throw InputError({path, number, 0}, field,
                       fmt::format("expert {} appears twice in one token", id));
    }
    token.push_back(static_cast<int>(id));
  }
  return token;
}

// The ranks holding a replica of each expert, in rank order.
std::vector<std::vector<int>> holders_of_experts(const ExpertPlacementMap& map) {
  std::vector<std::vector<int>> holders(map.share.size());
  for (size_t e = 0; e < map.share.size(); ++e) {
    for (int j = 0; j < map.ranks; ++j) {
      if (map.share[e][j] > 0) holders[e].push_back(j);
    }
  }
  return holders;
}

// The rank serving each expert a token chose, sent from `sender_domain`: a replica in the
// sender's domain first, then one in a domain the token already reaches, else the first
// replica. `reached` gets the other domains the token goes to, in first-reached order.
void route_token(const std::vector<int>& token, const std::vector<std::vector<int>>& holders,
                 int sender_domain, int ranks_per_domain, std::vector<int>* served_by,
                 std::vector<int>* reached) {
  served_by->clear();
  reached->clear();
  for (int e : token) {
    const auto& ranks = holders[e];
    auto on = [&](int domain) {
      return std::find_if(ranks.begin(), ranks.end(),
                          [&](int r) { return r / ranks_per_domain == domain; });
    };
    auto pick = on(sender_domain);
    for (size_t k = 0; pick == ranks.end() && k < reached->size(); ++k) pick = on((*reached)[k]);
    if (pick == ranks.end()) {
      pick = ranks.begin();
      reached->push_back(*pick / ranks_per_domain);
    }
    served_by->push_back(*pick);
  }
}

}  // namespace

TokenRouting read_token_routing(const std::string& path, int64_t experts, int top_k,
                                const std::string& field) {
  std::istringstream in(read_input_file(path, "the token routing file", {path, 0, 0}, field));
  TokenRouting routing;
  routing.experts = experts;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::vector<int> token = parse_token(line, path, number, field, experts);
    if (static_cast<int>(token.size()) != top_k) {
      throw InputError({path, number, 0}, field,
                       fmt::format("a token chooses model.experts_per_token = {} experts; this "
                                   "line has {}",
                                   top_k, token.size()));
    }
    routing.tokens.push_back(std::move(token));
  }
  if (routing.tokens.empty()) throw InputError({path, 0, 0}, field, "no tokens in the file");
  return routing;
}

int expert_domain_size(const config::Scenario& scenario) {
  const int domain = scale_up_domain_gpus(scenario.hardware());
  return std::max(1, std::min(domain, std::max(1, scenario.layout().ep())));
}

std::optional<TokenRouting> scenario_token_routing(const config::Scenario& scenario) {
  const auto& placement = scenario.expert_placement();
  if (!placement.has_token_routing_file()) return std::nullopt;
  return read_token_routing(placement.token_routing_file(), scenario.model().num_experts(),
                            scenario.model().experts_per_token(),
                            "expert_placement.token_routing_file");
}

std::vector<double> layer_expert_shares(const config::Scenario& scenario,
                                        const std::optional<TokenRouting>& sample, int64_t experts,
                                        int moe_layer) {
  return sample ? token_shares(*sample) : expert_shares(scenario.training(), experts, moe_layer);
}

std::vector<double> token_shares(const TokenRouting& routing) {
  std::vector<double> shares(static_cast<size_t>(routing.experts), 0.0);
  double copies = 0;
  for (const auto& token : routing.tokens) {
    for (int e : token) shares[e] += 1;
    copies += static_cast<double>(token.size());
  }
  for (double& s : shares) s /= copies;
  return shares;
}

CoOccurrence token_cooccurrence(const TokenRouting& routing) {
  const auto n = static_cast<size_t>(routing.experts);
  CoOccurrence co(n, std::vector<double>(n, 0.0));
  for (const auto& token : routing.tokens) {
    for (size_t a = 0; a < token.size(); ++a) {
      for (size_t b = a + 1; b < token.size(); ++b) {
        co[token[a]][token[b]] += 1;
        co[token[b]][token[a]] += 1;
      }
    }
  }
  return co;
}

double remote_domain_copies_per_token(const ExpertPlacementMap& map, const TokenRouting& routing,
                                      int ranks_per_domain) {
  const auto holders = holders_of_experts(map);
  const int domains = std::max(1, (map.ranks + ranks_per_domain - 1) / ranks_per_domain);
  double copies = 0;
  std::vector<int> served_by;
  std::vector<int> reached;
  for (int sender = 0; sender < domains; ++sender) {
    for (const auto& token : routing.tokens) {
      route_token(token, holders, sender, ranks_per_domain, &served_by, &reached);
      copies += static_cast<double>(reached.size());
    }
  }
  return copies / (static_cast<double>(domains) * static_cast<double>(routing.tokens.size()));
}

std::vector<double> dedup_dispatch_matrix(const ExpertPlacementMap& map,
                                          const TokenRouting& routing, int ranks_per_domain) {
  const auto holders = holders_of_experts(map);
  const auto n = static_cast<size_t>(map.ranks);
  std::vector<double> matrix(n * n, 0.0);
  auto landing = [&](int domain, int rail) {
    return static_cast<size_t>(landing_rank(map.ranks, ranks_per_domain, domain, rail));
  };
  std::vector<int> served_by;
  std::vector<int> reached;
  for (int sender = 0; sender < map.ranks; ++sender) {
    const int domain = sender / ranks_per_domain;
    const int rail = sender % ranks_per_domain;
    for (const auto& token : routing.tokens) {
      route_token(token, holders, domain, ranks_per_domain, &served_by, &reached);
      // A GPU serving several of the token's experts gets it once.
      std::sort(served_by.begin(), served_by.end());
      served_by.erase(std::unique(served_by.begin(), served_by.end()), served_by.end());
      for (int rank : served_by) {
        const int target = rank / ranks_per_domain;
        // Inside the sender's domain straight over NVLink; elsewhere from the landing GPU.
        const size_t from = target == domain ? static_cast<size_t>(sender) : landing(target, rail);
        if (from != static_cast<size_t>(rank)) matrix[from * n + rank] += 1;
      }
      for (int target : reached) matrix[sender * n + landing(target, rail)] += 1;
    }
  }
  const double copies = static_cast<double>(routing.tokens.size()) *
                        static_cast<double>(routing.tokens.front().size());
  for (double& m : matrix) m /= copies;
  return matrix;
}

std::vector<double> dedup_dispatch_matrix(const ExpertPlacementMap& map,
                                          const std::optional<TokenRouting>& sample,
                                          const RoutingRule& rule, int ranks_per_domain) {
  return sample ? dedup_dispatch_matrix(map, *sample, ranks_per_domain)
                : rule_dedup_dispatch_matrix(map, rule, ranks_per_domain);
}

}  // namespace racksim
