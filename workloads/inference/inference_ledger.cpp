#include "workloads/inference/inference_ledger.h"

#include <algorithm>

namespace racksim {

double weight_read_floor_s(double weight_bytes, double hbm_bytes_per_s) {
  return weight_bytes / hbm_bytes_per_s;
}

double compute_time_s(double tokens, double active_params, double flops_per_s) {
  return 2 * tokens * active_params / flops_per_s;
}

double break_even_batch(double flops_per_s, double hbm_bytes_per_s, double total_params,
                        double active_params, double bytes_per_weight) {
  return flops_per_s / hbm_bytes_per_s * (total_params / active_params) * (bytes_per_weight / 2);
}

double compute_cost_floor_per_token(double active_params, double flops_per_s,
                                    double price_per_gpu_s) {
  return compute_time_s(1, active_params, flops_per_s) * price_per_gpu_s;
}

double attended_entries(const AttentionSpec& spec, double context) {
  const double window = std::min<double>(static_cast<double>(spec.window), context);
  switch (spec.kind) {
    case AttentionKind::kFull:
    case AttentionKind::kLatent:
      return context;
    case AttentionKind::kSlidingWindow:
    case AttentionKind::kWindowed:
      return window;
    case AttentionKind::kCompressed:
      return context / spec.ratio;
    case AttentionKind::kCompressedSparse:
      return std::min<double>(static_cast<double>(spec.top_k), context / spec.ratio) + window;
  }
  return context;
}

double indexer_entries(const AttentionSpec& spec, double context) {
  return spec.kind == AttentionKind::kCompressedSparse ? context / spec.ratio : 0;
}

double kv_cache_bytes(const AttentionSpec& spec, double context, double elem_bytes) {
  if (windowed(spec.kind)) {
    return std::min<double>(static_cast<double>(spec.window), context) *
           kv_bytes_per_token(spec, elem_bytes);
  }
  // CSA keeps its local window uncompressed too.
  const double local = spec.kind == AttentionKind::kCompressedSparse
                           ? std::min<double>(static_cast<double>(spec.window), context) *
                                 static_cast<double>(spec.head_dim) * elem_bytes
                           : 0;
  return context * kv_bytes_per_token(spec, elem_bytes) + local;
}

double kv_read_bytes(const AttentionSpec& spec, double context, double elem_bytes) {
  // Width of one cache entry: what kv_bytes_per_token stores per entry, without the indexer.
  double entry = kv_bytes_per_token(spec, elem_bytes) * static_cast<double>(spec.ratio);
  if (spec.kind == AttentionKind::kCompressedSparse) {
    entry -= static_cast<double>(spec.indexer_head_dim) * elem_bytes;
  }
  return attended_entries(spec, context) * entry +
         indexer_entries(spec, context) * static_cast<double>(spec.indexer_head_dim) * elem_bytes;
}

GpuMemory gpu_memory(double weight_bytes, double kv_bytes_per_sequence, double micro_batch,
                     int expert_parallel, int pipeline_stages) {
  const double shards = static_cast<double>(expert_parallel) * pipeline_stages;
  const double batch = micro_batch * pipeline_stages;
  return {weight_bytes / shards, batch * kv_bytes_per_sequence / shards};
}

}  // namespace racksim
