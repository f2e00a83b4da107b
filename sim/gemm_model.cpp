#include "sim/gemm_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace racksim::sim {

GemmKernelCost gemm_kernel_cost(double m, double k, double n, double batch, int sm_count,
                                double peak_flops_per_s, double efficiency, double k_overhead) {
  GemmKernelCost best;
  best.seconds = std::numeric_limits<double>::infinity();
  if (sm_count <= 0 || peak_flops_per_s <= 0 || efficiency <= 0) return best;
  const double sms = sm_count;
  for (const GemmTile& tile : kGemmTiles) {
    const double tiles = std::max(1.0, batch) * std::ceil(m / tile.m) * std::ceil(n / tile.n);
    const double waves = std::ceil(tiles / sms);
    const double sm_rate = peak_flops_per_s * efficiency * tile.relative_efficiency / sms;
    const double seconds = waves * 2 * tile.m * tile.n * (k + k_overhead) / sm_rate;
    if (seconds < best.seconds) best = {seconds, tile.m, tile.n, tiles, waves};
  }
  return best;
}

}  // namespace racksim::sim
