#include "sim/gemm_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace racksim::sim {

namespace {

const GemmTile* find_tile(double tile_m, double tile_n) {
  for (const GemmTile& tile : kGemmTiles) {
    if (tile.m == tile_m && tile.n == tile_n) return &tile;
  }
  return nullptr;
}

// One wave of `tile`: its 2 tile_m tile_n (k / splits + k_overhead) FLOPs at the SM's share of
// the achievable peak, scaled by the tile's relative efficiency.
double wave_s(const GemmTile& tile, double k, int splits, double k_overhead,
              double peak_flops_per_s, double efficiency, int sm_count) {
  const double sm_rate = peak_flops_per_s * efficiency * tile.relative_efficiency / sm_count;
  return 2 * tile.m * tile.n * (k / splits + k_overhead) / sm_rate;
}

// Split-K's FP32 partial sums of `products` m x n outputs, written and read back through HBM.
double split_k_reduction_s(double products, int splits, double m, double n,
                           const GemmSplitK& split_k) {
  return splits > 1 ? products * splits * m * n * 4 * 2 / split_k.hbm_bytes_per_s : 0;
}

}  // namespace

GemmKernelCost gemm_kernel_cost(double m, double k, double n, double batch, int sm_count,
                                double peak_flops_per_s, double efficiency, double k_overhead,
                                const GemmSplitK& split_k) {
  GemmKernelCost best;
  best.seconds = std::numeric_limits<double>::infinity();
  if (sm_count <= 0 || peak_flops_per_s <= 0 || efficiency <= 0) return best;
  const double products = std::max(1.0, batch);
  const int max_splits = split_k.hbm_bytes_per_s > 0 ? std::max(1, split_k.max_splits) : 1;
  for (const GemmTile& tile : kGemmTiles) {
    const double tiles = products * std::ceil(m / tile.m) * std::ceil(n / tile.n);
    for (int splits = 1; splits <= max_splits; ++splits) {
      const double waves = std::ceil(tiles * splits / sm_count);
      const double seconds =
          waves * wave_s(tile, k, splits, k_overhead, peak_flops_per_s, efficiency, sm_count) +
          split_k_reduction_s(products, splits, m, n, split_k);
      if (seconds < best.seconds) best = {seconds, tile.m, tile.n, tiles, waves, splits};
    }
  }
  return best;
}

GemmKernelCost gemm_streams_cost(double m, double k, double n, double products, int streams,
                                 int sm_count, double peak_flops_per_s, double efficiency,
                                 double k_overhead, const GemmSplitK& split_k) {
  if (streams <= 0) {
    return gemm_kernel_cost(m, k, n, products, sm_count, peak_flops_per_s, efficiency, k_overhead,
                            split_k);
  }
  const double count = std::max(1.0, std::round(products));
  // The tile (and split) that runs a round of `streams` kernels fastest.
  const double per_round = std::min<double>(streams, count);
  const GemmKernelCost round = gemm_kernel_cost(m, k, n, per_round, sm_count, peak_flops_per_s,
                                                efficiency, k_overhead, split_k);
  const GemmTile* tile = find_tile(round.tile_m, round.tile_n);
  if (tile == nullptr) return round;
  const double full_rounds = std::floor(count / streams);
  const double last_round = count - full_rounds * streams;
  const double ctas = round.tiles / per_round * round.split_k;  // of one kernel
  const double waves =
      full_rounds * std::ceil(streams * ctas / sm_count) + std::ceil(last_round * ctas / sm_count);
  const double seconds =
      waves * wave_s(*tile, k, round.split_k, k_overhead, peak_flops_per_s, efficiency, sm_count) +
      split_k_reduction_s(count, round.split_k, m, n, split_k);
  return {seconds, round.tile_m, round.tile_n, count * round.tiles / per_round,
          waves,   round.split_k};
}

}  // namespace racksim::sim
