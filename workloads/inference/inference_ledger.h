// The algebra of inference (the roofline of decode, Reiner Pope's lecture, docs/sources.md §10):
// what batching does to latency and cost, where the break-even batch lies, and what the KV cache
// costs in memory. The simulated step (inference_step.h) must agree with these where they apply;
// tests pin it.
//
// Conventions: a weight in a matrix multiply costs 2 FLOPs per token; the lecture's
//   t_compute = B x 2 N_active / FLOP/s,   t_weights = N_total x bytes per weight / HBM bytes/s,
// so the break-even batch (t_compute = t_weights) is
//   B* = (FLOP/s / HBM bytes/s) x (N_total / N_active) x (bytes per weight / 2),
// which is the lecture's (FLOP/s / bandwidth) x (total / active) for 16-bit weights.
#pragma once

#include <cstdint>

#include "workloads/model/attention_ledger.h"

namespace racksim {

// The latency floor of one decode step: every weight read from HBM once (the lecture: 288 GB
// at 20 TB/s is about 14.4 ms). Per GPU: the bytes of weights it holds over its bandwidth.
double weight_read_floor_s(double weight_bytes, double hbm_bytes_per_s);

// Time to run `tokens` tokens through `active_params` weights at `flops_per_s`.
double compute_time_s(double tokens, double active_params, double flops_per_s);

// B* (above): the batch at which computing the batch takes as long as reading the weights.
double break_even_batch(double flops_per_s, double hbm_bytes_per_s, double total_params,
                        double active_params, double bytes_per_weight);

// The cost floor of a token when compute-bound: its FLOPs at the peak rate, priced per
// GPU-second (independent of the number of GPUs: more GPUs, proportionally less time each).
double compute_cost_floor_per_token(double active_params, double flops_per_s,
                                    double price_per_gpu_s);

// Keys a query attends to (entries of the cache it reads) at context `context` (decode: one
// query after `context` tokens). CSA: the top-k selected entries plus the local window; the
// indexer's scan of all compressed keys is counted by indexer_entries.
double attended_entries(const AttentionSpec& spec, double context);
double indexer_entries(const AttentionSpec& spec, double context);

// Bytes of KV cache one sequence of `context` tokens keeps for this layer (a sliding window
// keeps only its window; compressed kinds one entry per ratio tokens, the CSA indexer keys
// included).
double kv_cache_bytes(const AttentionSpec& spec, double context, double elem_bytes);

// Bytes of KV cache one decode query reads from HBM in this layer.
double kv_read_bytes(const AttentionSpec& spec, double context, double elem_bytes);

// Memory per GPU (the lecture's c_mem = N/(E P) + B L bytes/(E P)), with the batch that keeps
// P pipeline stages busy: B = micro_batch x P. The KV term does not depend on P.
struct GpuMemory {
  double weight_bytes = 0;
  double kv_bytes = 0;
};
GpuMemory gpu_memory(double weight_bytes, double kv_bytes_per_sequence, double micro_batch,
                     int expert_parallel, int pipeline_stages);

}  // namespace racksim
