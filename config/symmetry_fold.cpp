#include "config/symmetry_fold.h"

#include <fmt/format.h>

#include "proto/scale_up_domain.h"

namespace racksim::config {

namespace {

// A NIC port listed apart from the scale-out defaults that differs from them.
std::optional<std::string> mixed_nics(const config::ScaleOut& scale_out) {
  const auto default_layer = scale_out.link_layer() == config::LINK_LAYER_UNSPECIFIED
                                 ? config::INFINIBAND
                                 : scale_out.link_layer();
  for (const config::NicPort& port : scale_out.ports()) {
    const auto layer =
        port.link_layer() == config::LINK_LAYER_UNSPECIFIED ? default_layer : port.link_layer();
    const bool other_rate =
        port.has_bits_per_s() && port.bits_per_s() != scale_out.nic_bits_per_s();
    if (layer != default_layer || other_rate) {
      return fmt::format(
          "mixed NICs: hardware.scale_out.ports gives port {} {} at {:g} Gb/s, the others are {} "
          "at {:g} Gb/s, so replicas on different rails see different fabrics",
          port.index(), config::LinkLayer_Name(layer),
          (port.has_bits_per_s() ? port.bits_per_s() : scale_out.nic_bits_per_s()) / 1e9,
          config::LinkLayer_Name(default_layer), scale_out.nic_bits_per_s() / 1e9);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> fold_refusal(const config::Scenario& scenario) {
  const config::Layout& layout = scenario.layout();
  if (layout.dp() < 2) return "layout.dp is 1: there is a single data-parallel replica";
  const config::Training& training = scenario.training();
  const bool moe = scenario.model().num_experts() > 0;
  const auto routing = training.routing();
  if (moe && routing != config::Training::BALANCED &&
      routing != config::Training::ROUTING_UNSPECIFIED) {
    return fmt::format(
        "skewed routing: training.routing is {}, so expert ranks carry different loads and the "
        "replicas differ (folding needs BALANCED routing)",
        config::Training::Routing_Name(routing));
  }
  if (auto nics = mixed_nics(scenario.hardware().scale_out())) return nics;
  if (scenario.has_faults() && scenario.faults().ByteSizeLong() > 0) {
    return "faults: a faulty GPU, NIC or host makes its replica differ from replica 0";
  }
  // A replica's stage holds tp x cp GPUs; they must tile the scale-up domains the same way in
  // every replica.
  const int stage_gpus = layout.tp() * std::max(1, layout.cp());
  const int domain = scale_up_domain_gpus(scenario.hardware());
  if (domain > 0 && stage_gpus % domain != 0 && domain % stage_gpus != 0) {
    return fmt::format(
        "uneven placement: a replica's tp x cp = {} GPUs per stage straddle the {}-GPU scale-up "
        "domains differently in different replicas",
        stage_gpus, domain);
  }
  return std::nullopt;
}

std::vector<bool> folded_ranks(const ParallelLayout& layout) {
  std::vector<bool> simulated(layout.num_ranks(), false);
  for (RankId r = 0; r < layout.num_ranks(); ++r) simulated[r] = layout.coords(r).dp == 0;
  return simulated;
}

}  // namespace racksim::config
