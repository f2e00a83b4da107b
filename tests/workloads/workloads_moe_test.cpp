// The model ledger of MoE, MLA and hybrid-attention models against published totals and the seed
// report's figures (docs/seed-case.md), without simulation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>

#include "common/error.h"
#include "graph/graph_check.h"
#include "workloads/model/attention_ledger.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer.h"
#include "workloads/moe/expert_routing.h"
#include "workloads/moe/routing_rule.h"
#include "workloads/training/memory_ledger.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

TransformerModel seed() {
  return TransformerModel(*model_preset("seed-290b-moe"));
}

TEST(SeedModel, TotalsLandOnTheReport) {
  const TransformerModel m = seed();
  EXPECT_NEAR(m.total_params() / 1e9, 290, 0.01 * 290);
  EXPECT_NEAR(m.active_params() / 1e9, 14.2, 0.01 * 14.2);
  int sliding = 0, compressed = 0, sparse = 0;
  for (int l = 0; l < m.layers(); ++l) {
    sliding += m.attention(l).kind == AttentionKind::kSlidingWindow;
    compressed += m.attention(l).kind == AttentionKind::kCompressed;
    sparse += m.attention(l).kind == AttentionKind::kCompressedSparse;
    EXPECT_TRUE(m.mlp(l).moe);
  }
  EXPECT_EQ(sliding, 2);
  EXPECT_EQ(compressed, 20);
  EXPECT_EQ(sparse, 21);
}

TEST(SeedModel, AttentionCoefficientAndShare) {
  const TransformerModel m = seed();
  // Indexer 3 x 21 x 2 x 64 x 128 / 4 = 3 x 86,016; HCA 3 x 20 x 512 with causal halving.
  EXPECT_DOUBLE_EQ(m.attention_coeff(/*causal_halving=*/true), 288'768);
  const double six_n = 6 * m.active_params();
  for (auto [seq, share] : {std::pair{131072.0, 0.308}, {262144.0, 0.471}, {524288.0, 0.640}}) {
    const double a_l = m.attention_coeff(true) * seq;
    EXPECT_NEAR(a_l / (six_n + a_l), share, 0.0005) << seq;
  }
}

AttentionShape shape(int64_t seq, int cp, int64_t chunk) {
  AttentionShape s;
  s.seq_length = seq;
  s.cp = cp;
  s.indexer_chunk_tokens = chunk;
  return s;
}

AttentionSpec csa() {
  return attention_spec(*model_preset("seed-290b-moe"), AttentionKind::kCompressedSparse);
}

TEST(SeedMemory, IndexerScoreTensors) {
  // [b, s, 64, L/4]: 34.4 GB forward in BF16 at 32K with CP1 ...
  EXPECT_NEAR(attention_workspace(csa(), shape(32768, 1, 0)).bytes / 2 / 1e9, 34.4, 0.05);
  // ... 1,024 GiB per layer in FP32 at 512K, CP16 (s = 32,768) ...
  EXPECT_DOUBLE_EQ(attention_workspace(csa(), shape(524288, 16, 0)).bytes / kGiB, 1024);
  // ... and 32 GiB (16 GiB in BF16) chunked along queries, c = 1,024.
  EXPECT_DOUBLE_EQ(attention_workspace(csa(), shape(524288, 16, 1024)).bytes / kGiB, 32);
}

config::Scenario seed_scenario(int64_t seq) {
  config::Scenario s;
  *s.mutable_model() = *model_preset("seed-290b-moe");
  auto* l = s.mutable_layout();
  l->set_tp(1);
  l->set_pp(2);
  l->set_cp(16);
  l->set_ep(8);
  l->set_dp(1);
  l->set_first_stage_layers(22);
  auto* t = s.mutable_training();
  t->set_global_batch_size(128);
  t->set_micro_batch_size(1);
  t->set_seq_length(seq);
  t->set_recompute(config::Training::FULL);
  t->set_schedule(config::Training::ONE_F_ONE_B);
  t->set_dtype(config::BF16);
  t->set_grad_reduce_dtype(config::FP32);
  t->set_offload_optimizer(true);
  t->set_indexer_chunk_tokens(1024);
  s.mutable_hardware()->mutable_gpu()->set_hbm_bytes(288e9);
  s.mutable_hardware()->set_gpus_per_node(8);
  s.mutable_hardware()->mutable_host()->set_sockets(2);
  s.mutable_hardware()->mutable_host()->set_cpu_optimizer_params_per_s(2e9);
  return s;
}

TEST(SeedMemory, FullRecomputeKeepsTheLayerInputs) {
  // 256 MiB per layer (32,768 local tokens x 4,096 x 2 B); 22 layers: about 5.5 GiB.
  const auto s = seed_scenario(524288);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(resolve_training_plan(s), 0), 256.0 * 1024 * 1024);
  EXPECT_NEAR(22 * layer_activation_bytes(resolve_training_plan(s), 0) / kGiB, 5.5, 0.01);
}

TEST(SeedMemory, OptimizerStatePerGpu) {
  // The report's estimate: 290B over PP2 x EP8 = 18.1B parameters per GPU, 145 GB of FP32
  // moments or 217 GB with the master weights.
  const double per_gpu = seed().total_params() / (2 * 8);
  EXPECT_NEAR(per_gpu / 1e9, 18.1, 0.1);
  EXPECT_NEAR(per_gpu * 8 / 1e9, 145, 1.5);
  EXPECT_NEAR(per_gpu * 12 / 1e9, 217, 2.5);
  // The ledger counts the first stage's replicated dense weights too (the report's figure
  // spreads everything), and keeps the offloaded states in host memory.
  const MemoryLedger ledger = memory_ledger(resolve_training_plan(seed_scenario(524288)), 0);
  EXPECT_GT(ledger.host_bytes, 145e9);
  EXPECT_LT(ledger.host_bytes, 300e9);
  EXPECT_TRUE(ledger.fits()) << ledger.peak_bytes() / 1e9;
  EXPECT_NE(ledger.largest_transient.name.find("indexer"), std::string::npos);
}

TEST(SeedMemory, UnchunkedIndexerDoesNotFit) {
  auto s = seed_scenario(524288);
  s.mutable_training()->set_indexer_chunk_tokens(0);
  const MemoryLedger ledger = worst_memory_ledger(resolve_training_plan(s));
  EXPECT_FALSE(ledger.fits());
  EXPECT_NE(ledger.largest_transient.name.find("indexer"), std::string::npos);
  EXPECT_NEAR(ledger.largest_transient.bytes / kGiB, 1024, 1e-9);
}

// Communication sizes of one step of the seed scenario, read off its event graph.
struct Traffic {
  double dispatch_bytes = 0;  // one dispatch all-to-all's buffer
  double hop_bytes = 0;       // one ring-attention hop of a CSA layer
  double to_host = 0, to_device = 0;
};

Traffic seed_traffic(int64_t seq) {
  auto s = seed_scenario(seq);
  s.mutable_training()->set_global_batch_size(2);  // one micro-batch per... fewer ops
  const TrainingStep step = build_training_step(resolve_training_plan(s));
  Traffic t;
  for (const Op& op : step.graph.ops()) {
    if (op.rank != 0) continue;
    const std::string& label = step.graph.label(op.label);
    if (op.kind == OpKind::kCollective && label == "moe.dispatch") t.dispatch_bytes = op.amount;
    if (op.kind == OpKind::kSend && label == "attn.indexer.kv_send") t.hop_bytes = op.amount;
    if (op.kind == OpKind::kCopy) {
      (op.copy_direction == CopyDirection::kDeviceToHost ? t.to_host : t.to_device) += op.amount;
    }
  }
  return t;
}

TEST(SeedTraffic, AllToAllRingHopAndOffloadBytes) {
  const Traffic t = seed_traffic(262144);  // S_r = 16,384 local tokens
  // Balanced dispatch: every local token to 6 experts, 4,096 BF16 values each.
  EXPECT_DOUBLE_EQ(t.dispatch_bytes, 16384.0 * 6 * 4096 * 2);
  // A CSA hop carries the block's compressed entries: the indexer keys (S_r/4 x 128 x 2 B =
  // 1 MiB, the report's figure) and the 512-wide latent.
  const double entries = 16384.0 / 4;
  EXPECT_DOUBLE_EQ(entries * 128 * 2, 1024.0 * 1024);
  EXPECT_DOUBLE_EQ(t.hop_bytes, entries * (128 + 512) * 2);
  // The offloaded optimizer moves FP32 gradients out and BF16 parameters back once per step.
  const auto s = seed_scenario(262144);
  const double params = params_on_rank(TransformerModel(s.model()),
                                       ParallelLayout::from_config(s.layout()), pipeline_map(s), 0);
  EXPECT_DOUBLE_EQ(t.to_host, params * 4);
  EXPECT_DOUBLE_EQ(t.to_device, params * 2);
}

TEST(PublishedMoe, MixtralAndDeepseekTotals) {
  const TransformerModel mixtral(*model_preset("mixtral-8x7b"));
  EXPECT_NEAR(mixtral.total_params() / 1e9, 46.7, 0.5);
  EXPECT_NEAR(mixtral.active_params() / 1e9, 12.9, 0.3);  // 12.9B counts the input embedding
  const TransformerModel deepseek(*model_preset("deepseek-v3"));
  EXPECT_NEAR(deepseek.total_params() / 1e9, 671, 0.01 * 671);
  EXPECT_NEAR(deepseek.active_params() / 1e9, 37, 0.02 * 37);
}

// gpt-oss-120b: OpenAI's model card gives 116.8B in total and 5.1B active (arXiv 2508.10925). Its
// sliding layers (W) keep the model's own GQA heads and projections and attend to 128 keys:
// parameters and key/value width as a full layer's, attention FLOPs of a 128-key window.
TEST(PublishedMoe, GptOssTotalsAndItsWindowedLayers) {
  const config::Model model = *model_preset("gpt-oss-120b");
  const TransformerModel m(model);
  EXPECT_NEAR(m.total_params() / 1e9, 116.8, 0.3);
  EXPECT_NEAR(m.active_params() / 1e9, 5.13, 0.05);
  const std::vector<AttentionKind> kinds = attention_kinds(model);
  ASSERT_EQ(kinds.size(), 36u);
  EXPECT_EQ(kinds[0], AttentionKind::kWindowed);
  EXPECT_EQ(kinds[1], AttentionKind::kFull);
  const AttentionSpec windowed = attention_spec(model, AttentionKind::kWindowed);
  const AttentionSpec full = attention_spec(model, AttentionKind::kFull);
  EXPECT_EQ(attention_params(windowed), attention_params(full));
  EXPECT_EQ(kv_bytes_per_token(windowed, 2), 8.0 * (64 + 64) * 2);  // 8 KV heads, BF16
  EXPECT_FALSE(windowed.latent());
  // Window attention does not grow with L: left out of the MFU's aL, as the seed's S layers are.
  EXPECT_EQ(attention_coeff(windowed, false), 0);
  EXPECT_GT(attention_coeff(full, false), 0);
  config::Model bad = model;
  bad.mutable_hybrid()->set_layer_pattern(std::string(35, 'W') + "X");
  EXPECT_THROW(attention_kinds(bad), std::invalid_argument);
}

// The Qwen3 report's Table 2 gives the totals: 30.5B with 3.3B active, 235B with 22B active.
// Its active count includes the input embedding, which racksim's active parameters (those a
// token's FLOPs run through) leave out.
TEST(PublishedMoe, Qwen3TotalsAsTheReportGivesThem) {
  const auto active_with_embedding = [](const TransformerModel& m, double hidden) {
    return (m.active_params() + 151936 * hidden) / 1e9;
  };
  const TransformerModel small(*model_preset("qwen3-30b-a3b"));
  EXPECT_NEAR(small.total_params() / 1e9, 30.5, 0.2);
  EXPECT_NEAR(active_with_embedding(small, 2048), 3.3, 0.1);
  const TransformerModel large(*model_preset("qwen3-235b-a22b"));
  EXPECT_NEAR(large.total_params() / 1e9, 235.1, 0.5);
  EXPECT_NEAR(active_with_embedding(large, 4096), 22.0, 0.3);
}

TEST(Routing, BalancedZipfAndFile) {
  config::Training t;
  const auto balanced = rank_shares(expert_shares(t, 256, 0), 8);
  for (double share : balanced) EXPECT_DOUBLE_EQ(share, 1.0 / 8);
  EXPECT_DOUBLE_EQ(imbalance(balanced), 1);
  t.set_routing(config::Training::ZIPF);
  t.set_routing_zipf_exponent(1.0);
  t.set_routing_seed(7);
  const auto zipf = expert_shares(t, 256, 3);
  EXPECT_NEAR(std::accumulate(zipf.begin(), zipf.end(), 0.0), 1, 1e-12);
  EXPECT_GT(imbalance(rank_shares(zipf, 8)), 1.05);
  EXPECT_EQ(zipf, expert_shares(t, 256, 3)) << "seeded: the same every time";
  EXPECT_NE(zipf, expert_shares(t, 256, 4)) << "another layer, another order";
  const auto path = std::filesystem::temp_directory_path() / "racksim-routing-test.txt";
  std::ofstream(path) << "3 1 0 0\n";
  t.set_routing(config::Training::FROM_FILE);
  t.set_routing_file(path.string());
  EXPECT_EQ(expert_shares(t, 4, 0), (std::vector<double>{0.75, 0.25, 0, 0}));
  EXPECT_THROW(expert_shares(t, 5, 0), InputError);  // wrong count, named with file and line
  std::filesystem::remove(path);
}

TEST(SkewedRouting, WeightsTheAllToAllAndScalesExpertWork) {
  auto s = seed_scenario(65536);
  s.mutable_model()->set_num_layers(4);
  s.mutable_layout()->set_pp(1);
  s.mutable_layout()->clear_first_stage_layers();
  s.mutable_model()->mutable_hybrid()->set_sliding_window_layers(0);
  s.mutable_model()->mutable_hybrid()->set_compressed_layers(2);
  s.mutable_model()->mutable_hybrid()->set_compressed_sparse_layers(2);
  s.mutable_layout()->set_cp(16);
  s.mutable_layout()->set_dp(2);
  s.mutable_training()->set_global_batch_size(2);
  s.mutable_training()->set_routing(config::Training::ZIPF);
  s.mutable_training()->set_routing_zipf_exponent(1.2);
  const TrainingStep step = build_training_step(resolve_training_plan(s));
  EXPECT_NO_THROW(check_collectives(step.graph));
  EXPECT_GT(step.graph.num_weights(), 0u);
  // The experts' GEMMs differ between the ranks of an expert-parallel group.
  double min_flops = 1e300, max_flops = 0;
  for (const Op& op : step.graph.ops()) {
    if (op.kind != OpKind::kCompute || step.graph.label(op.label) != "moe.experts.up" ||
        op.layer != 0 || op.micro_batch != 0 || op.phase != Phase::kForward) {
      continue;
    }
    min_flops = std::min(min_flops, op.amount);
    max_flops = std::max(max_flops, op.amount);
  }
  EXPECT_GT(max_flops / min_flops, 1.05);
}

}  // namespace
}  // namespace racksim

namespace racksim {
namespace {

// DeepSeek-V3's dispatch: FP8 towards the experts (a byte per element and a 4-byte scale per
// 128), BF16 back; each token once per node, the matrix the routing rule gives.
TEST(DedupDispatch, Fp8TowardsTheExpertsAndTheRulesMatrix) {
  auto s = seed_scenario(65536);
  s.mutable_training()->set_global_batch_size(2);
  s.mutable_training()->set_moe_dispatch_dtype(config::FP8);
  s.mutable_expert_placement()->set_node_dedup_dispatch(true);
  s.mutable_hardware()->set_gpus_per_node(4);  // EP8 over two nodes
  const TrainingPlan plan = resolve_training_plan(s);
  const RoutingRule rule = routing_rule(s.model());
  EXPECT_EQ(plan.dedup_dispatch,
            rule_dedup_dispatch_matrix(contiguous_placement(rule.experts, 8), rule, 4));
  const TrainingStep step = build_training_step(plan);
  EXPECT_NO_THROW(check_collectives(step.graph));
  const double copies = 65536.0 / 16 * 6 * 4096;  // local tokens x top-k x hidden
  std::map<std::string, std::pair<double, uint32_t>> seen;
  for (const Op& op : step.graph.ops()) {
    if (op.rank == 0 && op.kind == OpKind::kCollective && op.micro_batch == 0 && op.layer == 2)
      seen[step.graph.label(op.label)] = {op.amount, op.weights};
  }
  const auto& dispatch = seen.at("moe.dispatch");
  EXPECT_DOUBLE_EQ(dispatch.first, copies * (1 + 4.0 / 128));
  EXPECT_DOUBLE_EQ(seen.at("moe.combine").first, copies * 2);
  EXPECT_DOUBLE_EQ(seen.at("moe.combine.bwd").first, copies * (1 + 4.0 / 128));
  EXPECT_DOUBLE_EQ(seen.at("moe.dispatch.bwd").first, copies * 2);
  // Towards the experts the matrix, back its transpose.
  const std::vector<double>& table = step.graph.weights(dispatch.second);
  EXPECT_EQ(table[0], static_cast<double>(WeightedAllToAll::kMatrix));
  EXPECT_EQ(std::vector<double>(table.begin() + 1, table.end()), plan.dedup_dispatch);
  EXPECT_EQ(seen.at("moe.combine.bwd").second, dispatch.second);
  const std::vector<double>& back = step.graph.weights(seen.at("moe.combine").second);
  EXPECT_EQ(back[1 + 1 * 8 + 4], plan.dedup_dispatch[4 * 8 + 1]);
  EXPECT_EQ(seen.at("moe.dispatch.bwd").second, seen.at("moe.combine").second);
}

TEST(ActivationOffload, EveryLayerInputGoesOutAndComesBackOnce) {
  auto s = seed_scenario(524288);
  s.mutable_training()->set_global_batch_size(4);
  s.mutable_training()->set_offload_activations(true);
  const TrainingStep step = build_training_step(resolve_training_plan(s));
  double out = 0, back = 0;
  int copies_out = 0;
  for (const Op& op : step.graph.ops()) {
    if (op.rank != 0 || op.kind != OpKind::kCopy) continue;
    const std::string& label = step.graph.label(op.label);
    if (label == "activations.to_host") {
      out += op.amount;
      ++copies_out;
    }
    if (label == "activations.to_device") back += op.amount;
  }
  // Full recompute keeps each layer's 256 MiB input: 22 layers x 4 micro-batches on stage 0.
  EXPECT_EQ(copies_out, 22 * 4);
  EXPECT_DOUBLE_EQ(out, 22 * 4 * 256.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(back, out);
  // HBM keeps two layers (double buffering); host memory the rest.
  const MemoryLedger ledger = memory_ledger(resolve_training_plan(s), 0);
  EXPECT_DOUBLE_EQ(ledger.activations.bytes, 2 * 256.0 * 1024 * 1024);
  const MemoryLedger kept = memory_ledger(resolve_training_plan(seed_scenario(524288)), 0);
  EXPECT_DOUBLE_EQ(ledger.host_bytes - kept.host_bytes, kept.activations.bytes);
}

}  // namespace
}  // namespace racksim
