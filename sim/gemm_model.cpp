#include "sim/gemm_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace racksim::sim {

GemmKernelCost gemm_kernel_cost(double m, double k, double n, double batch, int sm_count,
                                double peak_flops_per_s, double efficiency, double k_overhead,
                                const GemmSplitK& split_k) {
  GemmKernelCost best;
  best.seconds = std::numeric_limits<double>::infinity();
  if (sm_count <= 0 || peak_flops_per_s <= 0 || efficiency <= 0) return best;
  const double sms = sm_count;
  const double products = std::max(1.0, batch);
  const int max_splits = split_k.hbm_bytes_per_s > 0 ? std::max(1, split_k.max_splits) : 1;
  for (const GemmTile& tile : kGemmTiles) {
    const double tiles = products * std::ceil(m / tile.m) * std::ceil(n / tile.n);
    const double sm_rate = peak_flops_per_s * efficiency * tile.relative_efficiency / sms;
    for (int splits = 1; splits <= max_splits; ++splits) {
      const double waves = std::ceil(tiles * splits / sms);
      double seconds = waves * 2 * tile.m * tile.n * (k / splits + k_overhead) / sm_rate;
      if (splits > 1) seconds += products * splits * m * n * 4 * 2 / split_k.hbm_bytes_per_s;
      if (seconds < best.seconds) best = {seconds, tile.m, tile.n, tiles, waves, splits};
    }
  }
  return best;
}

}  // namespace racksim::sim
