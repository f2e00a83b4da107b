#include "workloads/token_routing.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/error.h"
#include "workloads/expert_routing.h"

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

// The nodes holding a replica of each expert, in rank order.
std::vector<std::vector<int>> nodes_of_experts(const ExpertPlacementMap& map, int ranks_per_node) {
  std::vector<std::vector<int>> nodes(map.share.size());
  for (size_t e = 0; e < map.share.size(); ++e) {
    for (int j = 0; j < map.ranks; ++j) {
      const int node = j / ranks_per_node;
      if (map.share[e][j] > 0 &&
          std::find(nodes[e].begin(), nodes[e].end(), node) == nodes[e].end()) {
        nodes[e].push_back(node);
      }
    }
  }
  return nodes;
}

}  // namespace

TokenRouting read_token_routing(const std::string& path, int64_t experts, int top_k,
                                const std::string& field) {
  std::ifstream in(path);
  if (!in) throw InputError({path, 0, 0}, field, "cannot read the token routing file");
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

double remote_node_copies_per_token(const ExpertPlacementMap& map, const TokenRouting& routing,
                                    int ranks_per_node) {
  const auto expert_nodes = nodes_of_experts(map, ranks_per_node);
  const int nodes = std::max(1, (map.ranks + ranks_per_node - 1) / ranks_per_node);
  double copies = 0;
  std::vector<int> reached;
  for (int sender = 0; sender < nodes; ++sender) {
    for (const auto& token : routing.tokens) {
      reached.clear();
      for (int e : token) {
        const auto& holders = expert_nodes[e];
        if (std::find(holders.begin(), holders.end(), sender) != holders.end()) continue;
        const auto shared =
            std::find_first_of(holders.begin(), holders.end(), reached.begin(), reached.end());
        if (shared == holders.end()) reached.push_back(holders.front());
      }
      copies += static_cast<double>(reached.size());
    }
  }
  return copies / (static_cast<double>(nodes) * static_cast<double>(routing.tokens.size()));
}

}  // namespace racksim
