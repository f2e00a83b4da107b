// The algebra of inference (the lecture Reiner Pope's lecture, docs/sources.md §10) and the
// inference step's ledger: floors, break-even batch, KV bytes per token per attention kind, the
// PP-does-not-help-KV identity, expert placement maps and the all-to-all boundary-crossing share.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "workloads/inference/inference_ledger.h"
#include "workloads/inference/inference_step.h"
#include "workloads/model/model_presets.h"
#include "workloads/moe/expert_placement.h"
#include "workloads/moe/expert_routing.h"

namespace racksim {
namespace {

TEST(InferenceAlgebra, WeightReadFloorIsTheLecturesFifteenMilliseconds) {
  // 288 GB of HBM read at 20 TB/s.
  EXPECT_NEAR(weight_read_floor_s(288e9, 20e12), 14.4e-3, 1e-12);
}

TEST(InferenceAlgebra, BreakEvenBatchBalancesComputeAndWeights) {
  // H800: 989 TFLOP/s BF16 over 3.35 TB/s is about 295; DeepSeek-V3 671B total / 37B active.
  const double b = break_even_batch(989e12, 3.35e12, 671e9, 37e9, 2);
  EXPECT_NEAR(b, 989e12 / 3.35e12 * 671.0 / 37.0, 1e-9);
  // At B*, computing the batch takes as long as reading the weights once.
  EXPECT_NEAR(compute_time_s(b, 37e9, 989e12), weight_read_floor_s(671e9 * 2, 3.35e12), 1e-12);
  // The lecture's 300 x sparsity 4 (8 of 32 experts): 1200 with 16-bit weights; FP8 halves it.
  EXPECT_NEAR(break_even_batch(300, 1, 4, 1, 2), 1200, 1e-9);
  EXPECT_NEAR(break_even_batch(300, 1, 4, 1, 1), 600, 1e-9);
}

TEST(InferenceAlgebra, ComputeCostFloorIsTheTokensFlopsPriced) {
  // 37B active at 1e15 FLOP/s: 74 us per token; at $3.6 per GPU-hour ($0.001 per second).
  EXPECT_NEAR(compute_cost_floor_per_token(37e9, 1e15, 0.001), 74e-6 * 0.001, 1e-18);
}

AttentionSpec gqa() {
  AttentionSpec s;
  s.kind = AttentionKind::kFull;
  s.hidden = 4096;
  s.heads = 32;
  s.kv_heads = 8;
  s.head_dim = 128;
  s.v_head_dim = 128;
  return s;
}

TEST(KvCache, BytesPerTokenPerAttentionKind) {
  // The lecture: 8 KV heads of 128, one byte each, keys and values: 2 x 128 x 8 = 2048 bytes.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(gqa(), 1), 2048);
  // DeepSeek-V3's MLA: a 512 latent and a 64-wide RoPE key per layer, 61 layers of BF16.
  const config::Model ds = *model_preset("deepseek-v3");
  const AttentionSpec mla = attention_spec(ds, AttentionKind::kLatent);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(mla, 2), (512 + 64) * 2);
  // Sliding window keeps only its window; compressed keeps one entry per ratio tokens; CSA adds
  // the indexer keys per entry and its local window.
  const config::Model seed = *model_preset("seed-290b-moe");
  const AttentionSpec swa = attention_spec(seed, AttentionKind::kSlidingWindow);
  EXPECT_DOUBLE_EQ(kv_cache_bytes(swa, 100000, 2), 128 * 512 * 2);
  const AttentionSpec hca = attention_spec(seed, AttentionKind::kCompressed);
  EXPECT_DOUBLE_EQ(kv_cache_bytes(hca, 128000, 2), 1000 * 512 * 2);
  const AttentionSpec csa = attention_spec(seed, AttentionKind::kCompressedSparse);
  EXPECT_DOUBLE_EQ(kv_cache_bytes(csa, 4000, 2), 1000 * (512 + 128) * 2 + 128 * 512 * 2);
  // A decode query reads the whole dense cache, but only top-k + window entries of CSA (plus
  // the indexer keys of every entry).
  EXPECT_DOUBLE_EQ(kv_read_bytes(gqa(), 1000, 2), 1000 * 2048 * 2);
  EXPECT_DOUBLE_EQ(kv_read_bytes(csa, 400000, 2), (512 + 128) * 512 * 2 + 100000 * 128 * 2);
}

TEST(KvCache, PipelineStagesDoNotReduceKvPerGpuWhenTheBatchGrowsWithThem) {
  // c_mem = N/(E P) + B L bytes/(E P) with B = b P: the KV term does not depend on P.
  const GpuMemory one = gpu_memory(1.4e12, 2e9, 16, 1, 1);
  for (int p : {2, 4, 8}) {
    const GpuMemory m = gpu_memory(1.4e12, 2e9, 16, 1, p);
    EXPECT_DOUBLE_EQ(m.weight_bytes, one.weight_bytes / p);
    EXPECT_DOUBLE_EQ(m.kv_bytes, one.kv_bytes);
  }
  // Expert parallelism over E GPUs shares the weights and the batch's cache alike.
  const GpuMemory ep = gpu_memory(1.4e12, 2e9, 16, 8, 1);
  EXPECT_DOUBLE_EQ(ep.weight_bytes, one.weight_bytes / 8);
  EXPECT_DOUBLE_EQ(ep.kv_bytes, one.kv_bytes / 8);
}

TEST(ExpertPlacement, CrossingShareOfABalancedAllToAllIsOneMinusGroupOverRanks) {
  const std::vector<double> shares(256, 1.0 / 256);
  for (int ranks : {64, 256}) {
    const auto map = contiguous_placement(256, ranks);
    for (int group : {8, 32, 64}) {
      EXPECT_NEAR(crossing_share(map, shares, group), 1.0 - static_cast<double>(group) / ranks,
                  1e-12)
          << ranks << " ranks, groups of " << group;
    }
  }
  // Across two racks, half the traffic crosses (the lecture).
  EXPECT_NEAR(crossing_share(contiguous_placement(256, 128), shares, 64), 0.5, 1e-12);
}

TEST(ExpertPlacement, ByLoadAndReplicasReduceTheImbalanceOfASkewedRouting) {
  config::Training t;
  t.set_routing(config::Training::ZIPF);
  t.set_routing_zipf_exponent(1.0);
  t.set_routing_seed(7);
  const auto shares = expert_shares(t, 64, 0);
  config::ExpertPlacement p;
  const double contiguous = imbalance(placed_rank_shares(place_experts(p, shares, 8, 8), shares));
  p.set_strategy(config::ExpertPlacement::BY_LOAD);
  const double by_load = imbalance(placed_rank_shares(place_experts(p, shares, 8, 8), shares));
  p.set_redundant_per_rank(1);
  const auto replicated_map = place_experts(p, shares, 8, 8);
  const double replicated = imbalance(placed_rank_shares(replicated_map, shares));
  EXPECT_LT(by_load, contiguous);
  EXPECT_LE(replicated, by_load);
  EXPECT_GE(replicated, 1.0);
  // Every expert's tokens are served in full, replicas splitting them.
  for (const auto& row : replicated_map.share) {
    EXPECT_NEAR(std::accumulate(row.begin(), row.end(), 0.0), 1.0, 1e-12);
  }
  EXPECT_EQ(replicated_map.experts_on_rank(), std::vector<int>(8, 9));
}

TEST(ExpertPlacement, CoOccurrenceKeepsPairsOnOneNode) {
  // 16 experts; pairs (2i, 2i+1 + 8 mod 16) are always chosen together: contiguous placement
  // splits every pair across the two nodes, co-occurrence placement keeps each on one node.
  const int experts = 16;
  const std::vector<double> shares(experts, 1.0 / experts);
  CoOccurrence co(experts, std::vector<double>(experts, 0.0));
  for (int e = 0; e < experts / 2; ++e) {
    const int partner = (e + experts / 2) % experts;
    co[e][partner] = co[partner][e] = 1;
  }
  config::ExpertPlacement p;
  p.set_strategy(config::ExpertPlacement::BY_COOCCURRENCE);
  const auto map = place_experts(p, shares, 4, 2, co);
  auto node_of = [&](int e) {
    for (int j = 0; j < 4; ++j) {
      if (map.share[e][j] > 0) return j / 2;
    }
    return -1;
  };
  for (int e = 0; e < experts / 2; ++e) EXPECT_EQ(node_of(e), node_of(e + experts / 2)) << e;
}

TEST(ExpertPlacement, CoOccurrenceFillsAPartialLastDomainByItsRanks) {
  // 6 experts on 3 ranks in domains of 2 (ranks 0-1, and rank 2 alone); pairs (0, 3), (1, 4),
  // (2, 5) are always chosen together: the full domain takes two pairs, the partial one one.
  CoOccurrence co(6, std::vector<double>(6, 0.0));
  for (int e = 0; e < 3; ++e) co[e][e + 3] = co[e + 3][e] = 1;
  config::ExpertPlacement p;
  p.set_strategy(config::ExpertPlacement::BY_COOCCURRENCE);
  const auto map = place_experts(p, std::vector<double>(6, 1.0 / 6), 3, 2, co);
  auto domain_of = [&](int e) {
    for (int j = 0; j < 3; ++j) {
      if (map.share[e][j] > 0) return j / 2;
    }
    return -1;
  };
  for (int e = 0; e < 3; ++e) EXPECT_EQ(domain_of(e), domain_of(e + 3)) << e;
  EXPECT_EQ(map.experts_on_rank(), (std::vector<int>{2, 2, 2}));
}

TEST(ExpertPlacement, TouchedExpertsGrowWithTheRoutedTokens) {
  const std::vector<double> shares(256, 1.0 / 256);
  const auto map = contiguous_placement(256, 1);
  EXPECT_NEAR(expected_touched_experts(map, shares, 0, 8), 256 * (1 - std::pow(1 - 1.0 / 256, 8)),
              1e-9);
  EXPECT_GT(expected_touched_experts(map, shares, 0, 8 * 4096), 255.99);
}

TEST(InferenceStep, StagesSplitTheLayersEvenly) {
  EXPECT_EQ(stage_layers(61, 4, 0), std::make_pair(0, 16));
  EXPECT_EQ(stage_layers(61, 4, 3), std::make_pair(46, 61));
}

}  // namespace
}  // namespace racksim
