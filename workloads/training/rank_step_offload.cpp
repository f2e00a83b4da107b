#include "workloads/training/rank_step.h"

#include <algorithm>

namespace racksim {

uint32_t RankStep::numa_node_of(RankId rank) const {
  const HostSettings& host = s_.plan.host;
  if (host.pinned_offload_socket >= 0) return static_cast<uint32_t>(host.pinned_offload_socket);
  const int per_node = std::max(1, s_.plan.cluster.gpus_per_node);
  const int sockets = std::max(1, host.sockets);
  return static_cast<uint32_t>((static_cast<int>(rank) % per_node) * sockets / per_node);
}

void RankStep::stash_activations(const ComputeChain& chain, int mb, int l) {
  if (!s_.plan.training.offload_activations) return;
  stashed_[{mb, l}] = writer_.graph().add_copy(
      writer_.context(s_.offload_streams.to_host, {Phase::kForward, mb, l}), "activations.to_host",
      CopyDirection::kDeviceToHost, numa_node_of(rank_), s_.offloaded_activation_bytes[l],
      chain.inputs());
}

void RankStep::fetch_activations(ComputeChain& chain, int mb, int l, OpId prefetch_after) {
  if (!s_.plan.training.offload_activations) return;
  std::vector<OpId> deps{stashed_.at({mb, l})};
  const OpId trigger = prefetch_after != kNoOp ? prefetch_after : chain.last_compute;
  if (trigger != kNoOp) deps.push_back(trigger);
  chain.pending.push_back(writer_.graph().add_copy(
      writer_.context(s_.offload_streams.to_device, {Phase::kBackward, mb, l}),
      "activations.to_device", CopyDirection::kHostToDevice, numa_node_of(rank_),
      s_.offloaded_activation_bytes[l], deps));
}

}  // namespace racksim
