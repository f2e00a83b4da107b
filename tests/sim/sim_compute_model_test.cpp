// The compute model's shape-dependent GEMM efficiency: the curve itself, the dimension it reads
// from a kernel's FLOPs and bytes, and that presets without it time kernels as before. And FP8
// casts at their own share of the HBM bandwidth.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "sim/compute_model.h"
#include "tests/support/compute_ops.h"
#include "workloads/model/layer_steps.h"

namespace racksim::sim {
namespace {

using testing::op_of;

ComputeModel a100(double half_dim) {
  ComputeModel m;
  m.bf16_flops_per_s = 312e12;
  m.hbm_bytes_per_s = 2.039e12;
  m.gemm_efficiency = 0.8;
  m.attention_efficiency = 0.5;
  m.elementwise_efficiency = 0.9;
  m.hbm_efficiency = 0.85;
  m.gemm_half_dim = half_dim;
  return m;
}

TEST(GemmShapeEfficiency, HarmonicDimensionOfAGemmStep) {
  for (auto [m, k, n] :
       {std::array<double, 3>{16384, 3072, 9216}, {4096, 384, 3072}, {1, 4096, 4096}}) {
    const LayerStep gemm = gemm_step("g", m, k, n, 2);
    const double expected = 3 / (1 / m + 1 / k + 1 / n);
    EXPECT_NEAR(gemm_harmonic_dim(gemm.flops, gemm.hbm_bytes, 2), expected, 1e-9 * expected);
  }
  EXPECT_EQ(gemm_harmonic_dim(1e9, 0, 2), 0);
}

TEST(GemmShapeEfficiency, SaturationCurve) {
  const double peak = 0.8, half = 500;
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(peak, half, half), peak / 2);
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(peak, 3 * half, half), peak * 0.75);
  EXPECT_NEAR(gemm_shape_efficiency(peak, 1e9, half), peak, 1e-6);
  double previous = 0;
  for (double d = 16; d < 1e5; d *= 2) {
    const double e = gemm_shape_efficiency(peak, d, half);
    EXPECT_GT(e, previous);
    EXPECT_LT(e, peak);
    previous = e;
  }
  // Off (0) or an unknown dimension: the flat efficiency.
  EXPECT_EQ(gemm_shape_efficiency(peak, 100, 0), peak);
  EXPECT_EQ(gemm_shape_efficiency(peak, 0, half), peak);
}

TEST(GemmShapeEfficiency, DurationsWithAndWithoutIt) {
  const Op big = op_of(gemm_step("qkv", 16384, 3072, 9216, 2));
  const Op thin = op_of(gemm_step("proj", 4096, 384, 3072, 2));  // TP8, micro-batch 2
  // Unset: the flat roofline, exactly as before.
  const ComputeModel flat = a100(0);
  EXPECT_DOUBLE_EQ(flat.duration_s(big), big.amount / (312e12 * 0.8));
  // Set: each GEMM at its own efficiency, the thin one further below the peak.
  const ComputeModel shaped = a100(300);
  const double d_big = 3 / (1 / 16384.0 + 1 / 3072.0 + 1 / 9216.0);
  EXPECT_DOUBLE_EQ(shaped.efficiency(big), 0.8 * d_big / (d_big + 300));
  EXPECT_DOUBLE_EQ(shaped.duration_s(big), big.amount / (312e12 * shaped.efficiency(big)));
  EXPECT_LT(shaped.efficiency(thin), shaped.efficiency(big));
  // The thin GEMM is compute-bound under the curve (its FLOP time exceeds its byte time).
  EXPECT_GT(shaped.duration_s(thin), thin.hbm_bytes / (2.039e12 * 0.85));
  // Other kernel classes keep their flat efficiency.
  Op attention = thin;
  attention.op_class = OpClass::kAttention;
  EXPECT_EQ(shaped.efficiency(attention), 0.5);
}

TEST(GemmShapeEfficiency, BackwardKernelsKeepTheForwardShape) {
  // dgrad and wgrad (and the fused backward) have the forward's dimensions permuted: the same
  // harmonic dimension, hence the same efficiency.
  BlockSteps block;
  block.forward.push_back(gemm_step("fc1", 8192, 3072, 1536, 2));
  derive_backward(&block);
  const ComputeModel shaped = a100(300);
  const double forward = shaped.efficiency(op_of(block.forward[0]));
  EXPECT_DOUBLE_EQ(shaped.efficiency(op_of(block.backward[0])), forward);
  EXPECT_DOUBLE_EQ(shaped.efficiency(op_of(block.backward_input[0])), forward);
  EXPECT_DOUBLE_EQ(shaped.efficiency(op_of(block.backward_weight[0])), forward);
}

// hardware.compute.fp8_cast: an FP8 cast moves its bytes at that share of the bandwidth; every
// other memory-bound kernel keeps `hbm`, and unset (0) the cast does too.
TEST(Fp8CastRate, CastsMoveTheirBytesAtTheirOwnShareOfTheBandwidth) {
  const double bytes = 67.1e6;  // a 4,096 x 4,096 BF16 tensor read, written in FP8 twice
  const Op cast = testing::compute_op(OpClass::kCast, 16.8e6, bytes);
  const Op add = testing::compute_op(OpClass::kElementwise, 16.8e6, bytes);
  ComputeModel m = a100(0);
  EXPECT_DOUBLE_EQ(m.duration_s(cast), bytes / (2.039e12 * 0.85));
  m.cast_hbm_efficiency = 0.389;
  EXPECT_DOUBLE_EQ(m.duration_s(cast), bytes / (2.039e12 * 0.389));
  EXPECT_DOUBLE_EQ(m.duration_s(add), bytes / (2.039e12 * 0.85));
  EXPECT_EQ(to_string(OpClass::kCast), "cast");
}

}  // namespace
}  // namespace racksim::sim
