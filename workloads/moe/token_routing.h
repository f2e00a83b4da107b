// A sample of routing decisions read from a file: the experts each token chose. It gives the
// per-expert token shares, which experts are chosen together (for the BY_COOCCURRENCE map), and
// how many copies a deduplicated dispatch sends per token under a placement. Its groups are
// scale-up domains (DeepSeek-V3 deduplicates per node because its nodes are its NVLink domains;
// an NVL72 rack forwards inside the whole rack): "domain" below.
//
// File format (expert_placement.token_routing_file): one token per line, the 0-based ids of the
// experts it chose (model.experts_per_token of them, distinct), separated by spaces or commas;
// blank lines and lines starting with '#' are skipped. One sample serves every MoE layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/scenario.pb.h"
#include "workloads/moe/expert_placement.h"
#include "workloads/moe/routing_rule.h"

namespace racksim {

struct TokenRouting {
  int64_t experts = 0;
  std::vector<std::vector<int>> tokens;  // [token]: the experts it chose
};

// Throws InputError naming `path`, the line and `field` on a malformed line, an expert id out
// of [0, experts), a repeated expert or a token with other than `top_k` experts.
TokenRouting read_token_routing(const std::string& path, int64_t experts, int top_k,
                                const std::string& field);

// GPUs of an EP group that share a scale-up domain (hardware.scale_up.domain_size, else a
// node): the group placement keeps co-chosen experts in, and a deduplicated dispatch reaches
// once and forwards inside over NVLink (a node of HGX servers, a whole NVL72 rack).
int expert_domain_size(const config::Scenario& scenario);

// The scenario's expert_placement.token_routing_file, read; nullopt when none is given.
std::optional<TokenRouting> scenario_token_routing(const config::Scenario& scenario);

// The experts' token shares in MoE layer `moe_layer`: the sample's when there is one, else
// training.routing's.
std::vector<double> layer_expert_shares(const config::Scenario& scenario,
                                        const std::optional<TokenRouting>& sample, int64_t experts,
                                        int moe_layer);

// Each expert's share of the token copies (sums to 1).
std::vector<double> token_shares(const TokenRouting& routing);

// How often each pair of experts was chosen by one token.
CoOccurrence token_cooccurrence(const TokenRouting& routing);

// The mean number of OTHER domains a token is sent to when the dispatch sends it once per
// destination domain (DeepSeek-V3's dispatch: one copy crosses the network, NVLink forwards it
// inside the domain), averaged over tokens and over sender domains (attention data parallelism
// spreads the senders evenly). An expert with replicas is served in the sender's domain if it
// holds one, else in a domain the token already goes to, else on its first replica.
double remote_domain_copies_per_token(const ExpertPlacementMap& map, const TokenRouting& routing,
                                      int ranks_per_domain);

// The dispatch of a domain-deduplicated all-to-all as an EP x EP matrix (row-major, for a kMatrix
// weights table): entry [i][j] is the bytes rank i sends to rank j per byte of its one-copy-per-
// expert dispatch. A token crosses to each other domain once, landing on the GPU of the sender's
// rail (local index), which forwards it over NVLink to the ranks serving its experts there (the
// forwarding is charged to the landing rank, in the same all-to-all); experts in the sender's
// domain get their copies over NVLink directly. The combine is the transpose.
std::vector<double> dedup_dispatch_matrix(const ExpertPlacementMap& map,
                                          const TokenRouting& routing, int ranks_per_domain);

// The same from `sample` when there is one, else from the model's routing rule under a balanced
// load (rule_dedup_dispatch_matrix, workloads/moe/routing_rule.h).
std::vector<double> dedup_dispatch_matrix(const ExpertPlacementMap& map,
                                          const std::optional<TokenRouting>& sample,
                                          const RoutingRule& rule, int ranks_per_domain);

}  // namespace racksim
