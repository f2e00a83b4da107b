// How long one GEMM kernel takes from its shape: tile and wave quantization over the GPU's SMs.
//
// cuBLAS / CUTLASS GEMMs give each thread block (CTA) one output tile of tile_m x tile_n and run
// the whole inner dimension k through it; the GPU holds one CTA per SM for the large tiles, so
// the tiles run in waves of sm_count. A tile costs 2 tile_m tile_n (k + k_overhead) FLOPs at
// the SM's share of the achievable peak, its efficiency relative to the largest tile's (smaller
// tiles reuse each loaded operand less). The library picks the tile that finishes first:
//
//   tiles(t)  = batch x ceil(m / t.m) x ceil(n / t.n)
//   waves(t)  = ceil(tiles(t) / sm_count)
//   time(t)   = waves(t) x 2 t.m t.n (k + k_overhead) / (peak x efficiency x t.relative / sms)
//   time      = min over t (and over the split-K factors allowed, GemmSplitK) of time(t)
//
// A large GEMM whose dimensions are multiples of the big tile reaches `efficiency` of the peak;
// a last wave that fills few SMs, a tile half empty at the edge of m or n, or a short k cost
// what they cost on the hardware. The memory floor (operands through HBM), the launch overhead
// and the CPU floor are the caller's (ComputeModel).
#pragma once

#include <array>

namespace racksim::sim {

struct GemmTile {
  double m = 0;
  double n = 0;
  double relative_efficiency = 1;  // of the largest tile's per-SM rate
};

// The tiles the model chooses from: CUTLASS's default BF16 tensor-core tiles for Ampere and
// Hopper (256x128 and 128x256 for large problems, 128x128, 128x64, 64x64 for small ones, 32x128
// for skinny ones such as decode's few tokens). The relative rates are estimates: a 64x64 tile
// loads 4x the operand bytes per FLOP of a 256x128 one and its math pipes idle on the loads.
constexpr std::array<GemmTile, 6> kGemmTiles = {{
    {256, 128, 1.0},
    {128, 256, 1.0},
    {128, 128, 0.92},
    {128, 64, 0.80},
    {64, 64, 0.60},
    {32, 128, 0.50},
}};

struct GemmKernelCost {
  double seconds = 0;
  double tile_m = 0;
  double tile_n = 0;
  double tiles = 0;
  double waves = 0;
  int split_k = 1;
};

// Split-K: when the output tiles are too few to fill the SMs, cuBLAS splits the inner dimension
// over several CTAs per tile (CUTLASS's GemmSplitKParallel; cuBLASLt's
// CUBLASLT_ALGO_CONFIG_SPLITK_NUM), each summing k / splits, and reduces their FP32 partial
// sums through memory: splits x m x n x 4 bytes written and read back. max_splits 1: no split.
struct GemmSplitK {
  int max_splits = 1;
  double hbm_bytes_per_s = 0;  // what the partial sums move at
};

// The fastest tile's cost for `batch` products of m x k x n on a GPU of `sm_count` SMs whose
// GEMMs reach `peak_flops_per_s` x `efficiency` when the tiles fill every wave.
GemmKernelCost gemm_kernel_cost(double m, double k, double n, double batch, int sm_count,
                                double peak_flops_per_s, double efficiency, double k_overhead,
                                const GemmSplitK& split_k = {});

// `products` GEMMs of m x k x n, each a kernel of its own, issued in turn on `streams` CUDA
// streams (Transformer Engine's per-expert cuBLAS GEMMs). The streams run `streams` kernels at a
// time, whose tiles share the SMs, each with the tile and split that run such a round fastest
// (gemm_kernel_cost with batch = streams):
//
//   rounds = products / streams (the last one partial)
//   time   = sum over rounds of ceil(kernels in the round x tiles x splits / sm_count) x wave
//
// where a wave is one tile's time at the chosen tile's rate. A grouped kernel instead fills every
// wave with all products' tiles (gemm_kernel_cost with batch = products). Why the round's tile:
// against Transformer Engine's published H100 rates (data/published/te-grouped-gemm-h100.csv),
// with the launch overhead, it puts the streams 1.4 and 11.4 % below the grouped kernel where
// they run 3.5 and 13.0 % below; the tile each kernel would take alone on the whole GPU (a small
// one, to fill the SMs) put the first 21 % below.
GemmKernelCost gemm_streams_cost(double m, double k, double n, double products, int streams,
                                 int sm_count, double peak_flops_per_s, double efficiency,
                                 double k_overhead, const GemmSplitK& split_k = {});

}  // namespace racksim::sim
