#include "config/experts_validate.h"

#include <fmt/format.h>

#include "workloads/moe/token_routing.h"

namespace racksim::config {
namespace {

// Mixture of experts and expert parallelism.
void check_expert_placement(const config::Scenario& scenario, const Checker& check) {
  const config::ExpertPlacement& placement = scenario.expert_placement();
  if (placement.redundant_per_rank() < 0) {
    check.fail(
        "expert_placement.redundant_per_rank",
        fmt::format("replica slots per rank are >= 0; got {}", placement.redundant_per_rank()));
  }
  if (placement.strategy() == config::ExpertPlacement::BY_COOCCURRENCE &&
      !placement.has_token_routing_file()) {
    check.fail("expert_placement.strategy",
               "BY_COOCCURRENCE needs expert_placement.token_routing_file (which experts the "
               "tokens choose together)");
  }
  if (placement.node_dedup_dispatch() && !placement.has_token_routing_file()) {
    // Without a sample the copies come from the routing rule with every expert equally likely.
    if (scenario.training().routing() > config::Training::BALANCED) {
      check.fail("expert_placement.node_dedup_dispatch",
                 "without expert_placement.token_routing_file a deduplicated dispatch follows "
                 "the model's routing rule under a balanced load; training.routing is not "
                 "BALANCED (give a token routing sample instead)");
    }
    if (placement.redundant_per_rank() > 0) {
      check.fail("expert_placement.node_dedup_dispatch",
                 "expert replicas (redundant_per_rank) with a deduplicated dispatch need "
                 "expert_placement.token_routing_file (which replica serves each token)");
    }
  }
  if (placement.has_token_routing_file()) {  // read now: a bad line fails before any output
    read_token_routing(placement.token_routing_file(), scenario.model().num_experts(),
                       scenario.model().experts_per_token(), "expert_placement.token_routing_file");
  }
}

// Group-limited routing: equal groups, and enough experts in a token's groups for its top-k.
void check_expert_groups(const config::Model& model, const Checker& check) {
  if (!model.has_moe_expert_groups()) {
    if (model.has_moe_groups_per_token())
      check.fail("model.moe_groups_per_token", "needs model.moe_expert_groups");
    return;
  }
  const int64_t groups = model.moe_expert_groups();
  check.positive("model.moe_expert_groups", true, groups);
  check_divisible(check, "model.moe_expert_groups", model.num_experts(), groups,
                  "num_experts {} is not divisible into {} equal groups", "model.num_experts");
  if (!model.has_moe_groups_per_token()) return;
  const int64_t per_token = model.moe_groups_per_token();
  if (per_token < 1 || per_token > groups) {
    check.fail("model.moe_groups_per_token",
               fmt::format("must be in [1, moe_expert_groups = {}], got {}", groups, per_token));
  }
  if (model.experts_per_token() % per_token != 0 ||
      model.experts_per_token() / per_token > model.num_experts() / groups) {
    check.fail("model.moe_groups_per_token",
               fmt::format("each of the {} groups a token reaches gives it experts_per_token / "
                           "moe_groups_per_token experts of its {}: {} does not divide into them",
                           per_token, model.num_experts() / groups, model.experts_per_token()));
  }
}

}  // namespace

void check_experts(const config::Scenario& scenario, const Sizes& sizes, const Checker& check) {
  const config::Model& model = scenario.model();
  const config::Training& training = scenario.training();
  if (model.num_experts() <= 0) {
    if (sizes.ep > 1)
      check.fail("layout.ep", "ep > 1 needs a model with experts (model.num_experts)");
    return;
  }
  check.positive("model.experts_per_token", model.has_experts_per_token(),
                 model.experts_per_token());
  check.positive("model.moe_ffn_hidden_size", model.has_moe_ffn_hidden_size(),
                 model.moe_ffn_hidden_size());
  if (model.experts_per_token() > model.num_experts()) {
    check.fail("model.experts_per_token",
               fmt::format("{} experts per token but only {} experts", model.experts_per_token(),
                           model.num_experts()));
  }
  if ((sizes.tp * sizes.cp * sizes.dp) % sizes.ep != 0) {
    check.fail("layout.ep",
               fmt::format("expert parallelism re-splits the tp x cp x dp = {} ranks of "
                           "a stage; ep {} does not divide them",
                           sizes.tp * sizes.cp * sizes.dp, sizes.ep));
  }
  check_divisible(check, "layout.ep", model.num_experts(), sizes.ep,
                  "num_experts {} is not divisible by ep {}: each expert-parallel rank holds "
                  "whole experts",
                  "model.num_experts");
  if (sizes.tp > 1 && !scenario.layout().sequence_parallel()) {
    check.fail("layout.sequence_parallel",
               "MoE layers with tp > 1 need sequence parallelism (Megatron-core splits the tokens "
               "over TP ranks before routing)");
  }
  if (training.routing() == config::Training::ZIPF && !(training.routing_zipf_exponent() > 0)) {
    check.fail("training.routing_zipf_exponent", "ZIPF routing needs an exponent > 0");
  }
  if (training.routing() == config::Training::FROM_FILE && training.routing_file().empty()) {
    check.fail("training.routing_file", "FROM_FILE routing needs a routing_file");
  }
  check_expert_groups(model, check);
  check_expert_placement(scenario, check);
}

}  // namespace racksim::config
