#include "workloads/training/rank_step.h"

#include <algorithm>

namespace racksim {

LayerStep RankStep::scaled_by_load(const LayerStep& step, const OpTag& tag) const {
  if (!step.scales_with_expert_load) return step;
  const auto& shares = layer_shares(tag);
  if (shares.empty()) return step;
  const double factor = shares[s_.plan.layout.ep_index(rank_)] * static_cast<double>(shares.size());
  LayerStep scaled = step;
  scaled.flops *= factor;
  scaled.hbm_bytes *= factor;
  return scaled;
}

const std::vector<double>& RankStep::layer_shares(const OpTag& tag) const {
  // Multi-token-prediction modules (in the head, layer -1) route like the last layer.
  const size_t layer =
      tag.layer >= 0 ? static_cast<size_t>(tag.layer) : s_.plan.expert_shares.size() - 1;
  return s_.plan.expert_shares[layer];
}

uint32_t RankStep::routing_weights(WeightedAllToAll weighting, const OpTag& tag) {
  // Deduplicated: towards the experts (the dispatch, the combine's gradient) the matrix, back
  // from them its transpose.
  if (s_.dedup_dispatch_weights != 0) {
    return weighting == WeightedAllToAll::kByReceiver ? s_.dedup_dispatch_weights
                                                      : s_.dedup_combine_weights;
  }
  const auto& shares = layer_shares(tag);
  if (shares.empty() || !s_.plan.training.skewed_routing) return 0;
  std::vector<double> table{static_cast<double>(weighting)};
  table.insert(table.end(), shares.begin(), shares.end());
  return writer_.graph().add_weights(std::move(table));
}

RankParams RankStep::layer_params(int layer) const {
  return split_params(s_.plan.model, s_.plan.layout, layer);
}

RankParams RankStep::block_params(const BlockSteps& block) const {
  if (&block == &s_.mtp) return mtp_chunk_params(s_.plan.model, s_.plan.layout, s_.plan.map);
  const double table = s_.plan.model.embedding_params() / s_.plan.layout.tp();
  if (&block != &s_.head) return {table, 0, table};
  const RankParams mtp = mtp_split_params(s_.plan.model, s_.plan.layout);
  const double own_table = s_.plan.model.tied_embeddings() && holds_embedding() ? 0 : table;
  const bool with_mtp = s_.plan.map.standalone_mtp_position() < 0;
  return {own_table + static_cast<double>(s_.plan.model.hidden()) + (with_mtp ? mtp.dense : 0),
          with_mtp ? mtp.expert : 0, own_table};
}

bool RankStep::holds_embedding() const {
  for (int c = 0; c < s_.plan.map.chunks_per_stage(); ++c) {
    if (s_.plan.map.starts_route({coords_.pp, c})) return true;
  }
  return false;
}

void RankStep::write_tied_embedding_sync() {
  // The copies of the embedding table outside stage 0: the output head's where it is tied, the
  // standalone MTP stage's; their gradients are summed with stage 0's before the optimizer.
  if (s_.plan.layout.pp() == 1 || s_.plan.map.dual()) return;
  std::vector<int> stages{0};
  const int mtp_stage = s_.plan.map.standalone_mtp_stage();
  if (mtp_stage > 0) stages.push_back(mtp_stage);
  const int last = s_.plan.layout.pp() - 1;
  if (s_.plan.model.tied_embeddings() && last != mtp_stage) stages.push_back(last);
  if (stages.size() == 1 || std::find(stages.begin(), stages.end(), coords_.pp) == stages.end()) {
    return;
  }
  std::vector<RankId> ranks;
  for (int stage : stages) ranks.push_back(rank_of_stage(stage));
  const CommId group = writer_.graph().add_communicator(ranks);
  const double bytes = s_.plan.model.embedding_params() / s_.plan.layout.tp() *
                       bytes_per_element(s_.plan.training.grad_reduce_dtype);
  writer_.collective(main_, s_.dp_stream, "embedding.grad.allreduce", CollectiveKind::kAllReduce,
                     group, bytes, CommDim::kPp, {Phase::kOptimizer, -1, -1});
}

}  // namespace racksim
