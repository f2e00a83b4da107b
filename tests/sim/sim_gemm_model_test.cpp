// The kernel compute model: tile and wave quantization of a GEMM over the SMs, the backward's two
// GEMMs with their own shapes, the memory floor, launch overhead and CPU floor, and the
// materialized attention's kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "sim/compute_model.h"
#include "sim/gemm_model.h"
#include "tests/support/compute_ops.h"
#include "workloads/model/attention_ledger.h"
#include "workloads/model/layer_steps.h"

namespace racksim::sim {
namespace {

constexpr double kPeak = 312e12;
constexpr double kEfficiency = 0.86;
constexpr int kSms = 108;

// One tile of tile_m x tile_n over k at the SM's share of the achievable peak, relative rate r.
double tile_s(double tile_m, double tile_n, double k, double r) {
  return 2 * tile_m * tile_n * k / (kPeak * kEfficiency * r / kSms);
}

TEST(GemmKernelCost, FullWavesOfTheLargestTileReachTheAchievablePeak) {
  // 12 x 9 tiles of 256 x 128: exactly one wave on 108 SMs.
  const double m = 256 * 12, n = 128 * 9, k = 4096;
  const GemmKernelCost cost = gemm_kernel_cost(m, k, n, 1, kSms, kPeak, kEfficiency, 0);
  EXPECT_EQ(cost.tile_m, 256);
  EXPECT_EQ(cost.waves, 1);
  EXPECT_NEAR(cost.seconds, 2 * m * n * k / (kPeak * kEfficiency), 1e-15);
}

TEST(GemmKernelCost, OneMoreRowCostsAWaveOfTheTileThatFinishesFirst) {
  // m = 3073: 256x128 tiles need 13 x 9 = 117 (2 waves, 2 tile times); 128x128 need 25 x 9 =
  // 225 (3 waves of half a tile at 0.92: 1.63); 128x64 need 25 x 18 = 450 (5 waves of a
  // quarter at 0.80: 1.5625); 64x64 need 49 x 18 = 882 (9 waves of an eighth at 0.60: 1.875).
  const double k = 4096;
  const GemmKernelCost cost = gemm_kernel_cost(3073, k, 1152, 1, kSms, kPeak, kEfficiency, 0);
  EXPECT_EQ(cost.tile_m, 128);
  EXPECT_EQ(cost.tile_n, 64);
  EXPECT_EQ(cost.tiles, 450);
  EXPECT_EQ(cost.waves, 5);
  EXPECT_NEAR(cost.seconds, 5 * tile_s(128, 64, k, 0.80), 1e-15);
  const double ideal = 2 * 3073 * 1152 * k / (kPeak * kEfficiency);
  EXPECT_NEAR(cost.seconds / ideal, 1.5625 * 3072 / 3073, 1e-9);
}

TEST(GemmKernelCost, BatchMultipliesTheTilesAndKOverheadLengthensEachTile) {
  // 108 products of one 256 x 128 tile each: one wave; k = 64 plus 64 of overhead doubles it.
  const GemmKernelCost cost = gemm_kernel_cost(256, 64, 128, 108, kSms, kPeak, kEfficiency, 64);
  EXPECT_EQ(cost.waves, 1);
  EXPECT_NEAR(cost.seconds, tile_s(256, 128, 128, 1.0), 1e-15);
}

// Split-K: 1024 x 1024 outputs are 64 tiles of 128 x 128 (the best whole tile), one wave that
// leaves 44 of 108 SMs idle. Split in three over k = 8192, 32 tiles of 256 x 128 make 96 slices
// of a third of the k each, one wave, plus the FP32 partial sums written and read through HBM.
TEST(GemmKernelCost, SplitKFillsTheWavesThatFewOutputTilesLeaveEmpty) {
  const double m = 1024, n = 1024, k = 8192, hbm = 2e12;
  const GemmKernelCost whole = gemm_kernel_cost(m, k, n, 1, kSms, kPeak, kEfficiency, 64);
  EXPECT_EQ(whole.split_k, 1);
  EXPECT_EQ(whole.tile_m, 128);
  EXPECT_NEAR(whole.seconds, tile_s(128, 128, k + 64, 0.92), 1e-12);
  const GemmKernelCost split = gemm_kernel_cost(m, k, n, 1, kSms, kPeak, kEfficiency, 64, {8, hbm});
  EXPECT_EQ(split.split_k, 3);
  EXPECT_EQ(split.tile_m, 256);
  EXPECT_EQ(split.waves, 1);
  EXPECT_NEAR(split.seconds, tile_s(256, 128, k / 3 + 64, 1.0) + 3 * m * n * 4 * 2 / hbm, 1e-12);
  EXPECT_LT(split.seconds, whole.seconds);
  // A GEMM whose tiles fill the waves does not split: the partial sums would only cost.
  const GemmKernelCost full =
      gemm_kernel_cost(256 * 12, 4096, 128 * 9, 1, kSms, kPeak, kEfficiency, 64, {8, hbm});
  EXPECT_EQ(full.split_k, 1);
}

ComputeModel kernel_a100() {
  ComputeModel m = testing::kernel_a100_model(kEfficiency);
  m.launch_overhead_s = 2e-6;
  m.cpu_launch_floor_s = 4e-6;
  return m;
}

using testing::op_of;

TEST(KernelComputeModel, BackwardRunsTheInputAndWeightGradientsWithTheirOwnShapes) {
  const ComputeModel model = kernel_a100();
  BlockSteps block;
  block.forward.push_back(gemm_step("g", 3073, 1152, 4096, 2));  // m, k, n
  derive_backward(&block);
  const LayerStep& bwd = block.backward.front();
  ASSERT_EQ(bwd.shape.pass, GemmPass::kBackward);
  const double dgrad = gemm_kernel_cost(3073, 4096, 1152, 1, kSms, kPeak, kEfficiency, 0).seconds;
  const double wgrad = gemm_kernel_cost(1152, 3073, 4096, 1, kSms, kPeak, kEfficiency, 0).seconds;
  EXPECT_NEAR(model.duration_s(op_of(bwd), bwd.shape), dgrad + wgrad + 2 * 2e-6, 1e-12);
  // Without its shape the same op falls back to the roofline.
  EXPECT_NE(model.duration_s(op_of(bwd)), model.duration_s(op_of(bwd), bwd.shape));
}

TEST(KernelComputeModel, TinyKernelsLastTheCpuFloorAndThinOnesTheirHbmBytes) {
  const ComputeModel model = kernel_a100();
  const LayerStep tiny = gemm_step("tiny", 64, 64, 64, 2);
  EXPECT_DOUBLE_EQ(model.duration_s(op_of(tiny), tiny.shape), 4e-6);
  // A 16-token GEMM against a 8192 x 8192 weight reads 128 MiB: bound by HBM, not by tiles.
  const LayerStep thin = gemm_step("thin", 16, 8192, 8192, 2);
  const double hbm_s = thin.hbm_bytes / (2.039e12 * 0.85);
  EXPECT_NEAR(model.duration_s(op_of(thin), thin.shape), hbm_s + 2e-6, 1e-12);
}

// hardware.compute.gemm_unaligned: an output layer over GPT-2's 50,257 words at TP1 (n odd) runs
// its three GEMMs at that fraction of the rate; at TP2 (25,128, a multiple of 8) it does not pay.
// The tokens (m) are no operand's row length and do not count.
TEST(KernelComputeModel, GemmsWithAWeightDimensionOffSixteenBytesRunAtTheUnalignedRate) {
  ComputeModel model = kernel_a100();
  model.launch_overhead_s = 0;
  model.cpu_launch_floor_s = 0;
  auto seconds = [&](double m, double k, double n) {
    BlockSteps block;
    block.forward.push_back(gemm_step("head", m, k, n, 2));
    derive_backward(&block);
    const LayerStep& fw = block.forward.front();
    const LayerStep& bw = block.backward.front();
    return model.duration_s(op_of(fw), fw.shape) + model.duration_s(op_of(bw), bw.shape);
  };
  const double tp1 = seconds(8192, 2048, 50257), tp2 = seconds(8192, 2048, 25128);
  const double odd_tokens = seconds(8191, 2048, 25128);
  model.gemm_unaligned = 0.4;
  EXPECT_NEAR(seconds(8192, 2048, 50257) / tp1, 2.5, 1e-12);
  EXPECT_DOUBLE_EQ(seconds(8192, 2048, 25128), tp2);
  EXPECT_GT(seconds(8192, 2044, 25128) / seconds(8192, 2048, 25128), 2.4);  // k a multiple of 4
  EXPECT_DOUBLE_EQ(seconds(8191, 2048, 25128), odd_tokens);
}

TEST(KernelComputeModel, SmsHeldByCommunicationLeaveTheRestToTheTiles) {
  // hardware.compute.comm_reserved_sms: 12 of 108 SMs to communication kernels. A GEMM of 12 x 8
  // tiles of 256 x 128 is one full wave on the 96 left, at the same rate per SM.
  config::Hardware hw;
  hw.mutable_gpu()->set_bf16_flops_per_s(kPeak);
  hw.mutable_gpu()->set_hbm_bytes_per_s(2.039e12);
  hw.mutable_gpu()->set_sm_count(kSms);
  hw.mutable_compute()->set_model(config::ComputeEfficiency::KERNEL);
  hw.mutable_compute()->set_gemm(kEfficiency);
  hw.mutable_compute()->set_elementwise(0.5);
  hw.mutable_compute()->set_hbm(1);
  hw.mutable_compute()->set_comm_reserved_sms(12);
  const ComputeModel model = ComputeModel::from_hardware(hw);
  EXPECT_EQ(model.sm_count, 96);
  const LayerStep full = gemm_step("full", 256 * 12, 4096, 128 * 8, 2);
  EXPECT_NEAR(model.duration_s(op_of(full), full.shape), tile_s(256, 128, 4096, 1.0), 1e-15);
  // FLOP-bound kernels outside the tile model run at 96 / 108 of the peak; memory-bound ones
  // keep the HBM bandwidth.
  const LayerStep flops = elementwise_step("flops", 0, 1e12, 2);
  EXPECT_NEAR(model.duration_s(op_of(flops)), 1e12 / (kPeak * 0.5 * 96 / 108), 1e-12);
  const LayerStep bytes = elementwise_step("bytes", 1e9, 1, 2);
  EXPECT_NEAR(model.duration_s(op_of(bytes)), 2e9 / 2.039e12, 1e-12);
}

TEST(KernelComputeModel, Fp8GemmsTakeTheirOwnFractionAndTileOverhead) {
  // gemm_fp8 and gemm_fp8_k_overhead: a full wave of 256 x 128 tiles over k = 4096 costs
  // (4096 + 704) K elements at 0.74 of the FP8 peak; the BF16 GEMM keeps gemm and its overhead.
  config::Hardware hw;
  hw.mutable_gpu()->set_bf16_flops_per_s(kPeak);
  hw.mutable_gpu()->set_fp8_flops_per_s(2 * kPeak);
  hw.mutable_gpu()->set_hbm_bytes_per_s(2.039e12);
  hw.mutable_gpu()->set_sm_count(kSms);
  hw.mutable_compute()->set_model(config::ComputeEfficiency::KERNEL);
  hw.mutable_compute()->set_gemm(kEfficiency);
  hw.mutable_compute()->set_gemm_k_overhead(64);
  hw.mutable_compute()->set_hbm(1);
  hw.mutable_compute()->set_gemm_fp8(0.74);
  hw.mutable_compute()->set_gemm_fp8_k_overhead(704);
  const ComputeModel model = ComputeModel::from_hardware(hw);
  const LayerStep full = gemm_step("full", 256 * 12, 4096, 128 * 9, 2);
  Op op = op_of(full);
  EXPECT_NEAR(model.duration_s(op, full.shape), tile_s(256, 128, 4096 + 64, 1.0), 1e-15);
  op.dtype = DataType::kFp8;
  const double fp8_tile_s = 2.0 * 256 * 128 * (4096 + 704) / (2 * kPeak * 0.74 / kSms);
  EXPECT_NEAR(model.duration_s(op, full.shape), fp8_tile_s, 1e-15);
  // Unset, FP8 takes the BF16 values at its own peak.
  hw.mutable_compute()->clear_gemm_fp8();
  hw.mutable_compute()->clear_gemm_fp8_k_overhead();
  EXPECT_NEAR(ComputeModel::from_hardware(hw).duration_s(op, full.shape),
              tile_s(256, 128, 4096 + 64, 1.0) / 2, 1e-15);
}

// Multi-head attention of `heads` heads of `head_dim` over hidden, and one rank's share of a
// micro-batch of sequences with the scores materialized.
AttentionSpec mha(int hidden, int heads, int head_dim) {
  AttentionSpec spec;
  spec.hidden = hidden;
  spec.heads = heads;
  spec.kv_heads = heads;
  spec.head_dim = head_dim;
  spec.v_head_dim = head_dim;
  return spec;
}

AttentionShape materialized(int64_t micro_batch, int64_t seq_length, int tp) {
  AttentionShape shape;
  shape.micro_batch = micro_batch;
  shape.seq_length = seq_length;
  shape.tp = tp;
  shape.materialized = true;
  return shape;
}

TEST(MaterializedAttention, ScoresAndContextAreBatchedGemmsWithASoftmaxBetween) {
  const AttentionSpec spec = mha(3072, 32, 96);
  const AttentionShape shape = materialized(2, 2048, 2);
  BlockSteps block;
  append_attention(spec, shape, &block);
  const double batch = 2 * 32 / 2;
  const double scores = batch * 2048.0 * 2048.0;
  std::vector<std::string> names;
  for (const LayerStep& s : block.forward) names.push_back(s.name);
  auto find = [&](const std::string& name) {
    for (const LayerStep& s : block.forward) {
      if (s.name == name) return s;
    }
    ADD_FAILURE() << name << " missing";
    return LayerStep{};
  };
  const LayerStep qk = find("attn.scores");
  EXPECT_EQ(qk.shape.batch, batch);
  EXPECT_EQ(qk.shape.k, 96);
  EXPECT_DOUBLE_EQ(qk.flops, 2 * scores * 96);  // no causal skipping
  EXPECT_DOUBLE_EQ(find("attn.softmax").hbm_bytes, 9 * scores);
  EXPECT_DOUBLE_EQ(find("attn.context").flops, 2 * scores * 96);
}

// Megatron's fused softmax kernel needs (micro-batch x heads per rank) % 4 == 0 and at most 4,096
// keys; otherwise the softmax runs as five PyTorch kernels in FP32: 36 + 5 bytes per score
// forward (the casts, scale, mask and softmax, and the dropout), 40 + 5 backward.
TEST(MaterializedAttention, SoftmaxFallsBackToFiveFp32KernelsWhereTheFusedKernelDoesNotApply) {
  const AttentionSpec spec = mha(1024, 16, 64);
  AttentionShape shape = materialized(1, 1024, 8);  // 2 heads per rank: 1 x 2 is not 4's multiple
  auto softmax_kernels = [&](const AttentionShape& sh) {
    BlockSteps block;
    append_attention(spec, sh, &block);
    double forward = 0, backward = 0;
    int kernels = 0;
    for (const LayerStep& s : block.forward) {
      if (s.name.rfind("attn.softmax", 0) != 0) continue;
      ++kernels;
      forward += s.hbm_bytes;
      backward += s.hbm_bytes * s.backward_bytes_factor;
    }
    return std::tuple{kernels, forward, backward};
  };
  const double scores = 2 * 1024.0 * 1024.0;
  const auto [kernels, forward, backward] = softmax_kernels(shape);
  EXPECT_EQ(kernels, 5);
  EXPECT_DOUBLE_EQ(forward, 41 * scores);
  EXPECT_DOUBLE_EQ(backward, 45 * scores);
  shape.micro_batch = 2;  // 2 x 2 heads: the fused kernel
  const auto [fused_kernels, fused_forward, fused_backward] = softmax_kernels(shape);
  EXPECT_EQ(fused_kernels, 1);
  EXPECT_DOUBLE_EQ(fused_forward, 9 * 2 * scores);
  EXPECT_DOUBLE_EQ(fused_backward, 11 * 2 * scores);
  shape.seq_length = 8192;  // more than 4,096 keys: the fallback again
  EXPECT_EQ(std::get<0>(softmax_kernels(shape)), 5);
}

// hardware.compute.gemm_sustained: a GEMM that fills every SM runs no faster than the ceiling
// (the GPU's clocks under its power limit), whatever its tiles; one that leaves most SMs idle
// keeps the rate of its tiles.
TEST(KernelComputeModel, TheSustainedCeilingCapsLargeGemmsAndLeavesSmallOnesToTheirTiles) {
  ComputeModel model = testing::kernel_a100_model(1);
  auto seconds = [&](double m, double k, double n) {
    const LayerStep step = gemm_step("g", m, k, n, 2);
    return model.duration_s(op_of(step), step.shape);
  };
  const double large = seconds(8192, 8192, 8192), small = seconds(256, 4096, 128);
  model.gemm_sustained = 0.859;
  EXPECT_NEAR(seconds(8192, 8192, 8192), 2.0 * 8192 * 8192 * 8192 / (kPeak * 0.859), 1e-12);
  EXPECT_GT(seconds(8192, 8192, 8192), large);
  EXPECT_DOUBLE_EQ(seconds(256, 4096, 128), small);
}

// hardware.compute.sustained_clock_ratio: the SMs run at that share of the clock the rates were
// measured at, so a GEMM's tiles (main loop and fixed costs alike) and a FLOP-bound kernel take
// 1 / ratio as long; an HBM-bound kernel keeps the bandwidth, and the MFU denominator keeps the
// datasheet peak.
TEST(KernelComputeModel, TheSustainedClockSlowsEveryFlopBoundKernelAndNoHbmBoundOne) {
  ComputeModel model = testing::kernel_a100_model(0.9);
  model.gemm_k_overhead = 64;
  model.attention_efficiency = 0.6;
  auto seconds = [&](const LayerStep& step) { return model.duration_s(op_of(step), step.shape); };
  const LayerStep large = gemm_step("g", 8192, 8192, 8192, 2);
  const LayerStep small = gemm_step("g", 256, 4096, 128, 2);
  const LayerStep attention = attention_step("a", 1e12, 1e6);
  const LayerStep elementwise = elementwise_step("e", 1e9, 1e6, 2);
  const double before[] = {seconds(large), seconds(small), seconds(attention),
                           seconds(elementwise)};
  model.sustained_clock_ratio = 0.8;
  EXPECT_NEAR(seconds(large), before[0] / 0.8, 1e-12);
  EXPECT_NEAR(seconds(small), before[1] / 0.8, 1e-12);
  EXPECT_NEAR(seconds(attention), before[2] / 0.8, 1e-12);
  EXPECT_DOUBLE_EQ(seconds(elementwise), before[3]);
  EXPECT_DOUBLE_EQ(model.peak_flops_per_s(DataType::kBf16), kPeak);
}

// timed() names the term that sets duration_s: the ceiling for a GEMM that fills the GPU, the
// tiles for one that leaves SMs idle, the host when it issues slower than the GPU runs, the HBM
// for an element-wise kernel, and a recorded duration as given.
TEST(KernelComputeModel, TimedNamesTheTermThatSetsTheDuration) {
  ComputeModel model = testing::kernel_a100_model(1);
  model.gemm_sustained = 0.8;
  auto bound = [&](const LayerStep& step) { return model.timed(op_of(step), step.shape).bound; };
  EXPECT_EQ(bound(gemm_step("g", 8192, 8192, 8192, 2)), KernelBound::kGemmSustained);
  EXPECT_EQ(bound(gemm_step("g", 256, 4096, 128, 2)), KernelBound::kGemmTiles);
  EXPECT_EQ(bound(elementwise_step("e", 1e9, 1e6, 2)), KernelBound::kMemory);
  Op recorded = op_of(gemm_step("g", 8192, 8192, 8192, 2));
  recorded.duration_s = 1e-3;
  EXPECT_EQ(model.timed(recorded, KernelShape{}).bound, KernelBound::kGiven);
  model.cpu_launch_floor_s = 1;  // a host far slower than any of these kernels
  EXPECT_EQ(bound(gemm_step("g", 256, 4096, 128, 2)), KernelBound::kHost);
  model.cpu_launch_floor_s = 0;
  model.gemm_sustained = 0;  // no ceiling: the large GEMM's tiles set it
  EXPECT_EQ(bound(gemm_step("g", 8192, 8192, 8192, 2)), KernelBound::kGemmTiles);
}

// training.expert_gemm PER_EXPERT_STREAMS: a kernel per expert, four streams at a time, each
// with the tile that runs a round of four fastest. In full rounds each round is the waves of four
// kernels' tiles.
TEST(GemmStreamsCost, FullRoundsRunTheStreamsKernelsTilesInWaves) {
  const double m = 512, k = 2048, n = 1536;
  const GemmKernelCost round = gemm_kernel_cost(m, k, n, 4, kSms, kPeak, kEfficiency, 0);
  const double wave_s = round.seconds / round.waves;
  const double ctas = round.tiles / 4;  // of one kernel
  const GemmKernelCost streams = gemm_streams_cost(m, k, n, 16, 4, kSms, kPeak, kEfficiency, 0);
  EXPECT_EQ(streams.tile_m, round.tile_m);
  EXPECT_EQ(streams.tile_n, round.tile_n);
  EXPECT_DOUBLE_EQ(streams.waves, 4 * std::ceil(4 * ctas / kSms));
  EXPECT_NEAR(streams.seconds, streams.waves * wave_s, 1e-15);
  // Five kernels: one full round and a round of one.
  const GemmKernelCost five = gemm_streams_cost(m, k, n, 5, 4, kSms, kPeak, kEfficiency, 0);
  EXPECT_DOUBLE_EQ(five.waves, std::ceil(4 * ctas / kSms) + std::ceil(ctas / kSms));
}

// A grouped kernel fills its waves with every product's tiles and picks its tile for all of them:
// never slower than the same products as kernels on streams.
TEST(GemmStreamsCost, AGroupedKernelIsNeverSlowerThanKernelsOnStreams) {
  for (double m : {64.0, 200.0, 512.0, 2048.0, 8192.0}) {
    for (double products : {1.0, 3.0, 16.0, 32.0}) {
      const GemmSplitK split{4, 2e12};
      const double grouped =
          gemm_kernel_cost(m, 2048, 1536, products, kSms, kPeak, kEfficiency, 32, split).seconds;
      const double streams =
          gemm_streams_cost(m, 2048, 1536, products, 4, kSms, kPeak, kEfficiency, 32, split)
              .seconds;
      EXPECT_LE(grouped, streams * (1 + 1e-12)) << m << " x " << products;
    }
  }
}

// The host issues each expert's GEMM (two per expert in the backward), and each stream pays the
// launch overhead of the kernels it runs in turn.
TEST(KernelComputeModel, KernelsOnStreamsAreIssuedOneByOne) {
  ComputeModel model = testing::kernel_a100_model(1);
  LayerStep step = gemm_step("experts", 16 * 512, 2048, 1536, 2);
  step.shape.m = 512;
  step.shape.batch = 16;
  step.shape.streams = 4;
  model.cpu_launch_floor_s = 1;  // far slower than the GPU: the host sets the time
  EXPECT_DOUBLE_EQ(model.duration_s(op_of(step), step.shape), 16);
  KernelShape backward = step.shape;
  backward.pass = GemmPass::kBackward;
  Op backward_op = op_of(step);
  backward_op.amount = backward.flops();
  EXPECT_DOUBLE_EQ(model.duration_s(backward_op, backward), 32);
  model.cpu_launch_floor_s = 0;
  const double gpu = model.duration_s(op_of(step), step.shape);
  model.launch_overhead_s = 1e-3;
  EXPECT_NEAR(model.duration_s(op_of(step), step.shape) - gpu, 4e-3, 1e-12);  // 16 / 4 streams
}

}  // namespace
}  // namespace racksim::sim
