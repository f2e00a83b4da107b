// The tile model's two terms fitted to a measured GEMM grid (tests/sim/sim_*_grid and
// sim_h200_kernels tests): a grid search over the fraction of the peak and the fixed elements
// per tile, minimising the root-mean-square log error of the time (every shape counts alike
// whether it takes microseconds or milliseconds).
#pragma once

#include <cmath>
#include <vector>

#include "sim/compute_model.h"

namespace racksim::testing {

// `model_s(row, terms)`: the tile model's time for a row; `measured_s(row)`: the row's.
template <class Row, class ModelTime, class MeasuredTime>
double rms_log_error(const std::vector<Row>& rows, sim::ComputeModel::GemmRate terms,
                     ModelTime model_s, MeasuredTime measured_s) {
  double sum = 0;
  for (const Row& row : rows) sum += std::pow(std::log(model_s(row, terms) / measured_s(row)), 2);
  return std::sqrt(sum / rows.size());
}

// 0.005 steps of the fraction from 0.5 to 1.0, `k_step` elements from 0 to 2,048 per tile.
template <class Row, class ModelTime, class MeasuredTime>
sim::ComputeModel::GemmRate fit_tile_terms(const std::vector<Row>& rows, int k_step,
                                           ModelTime model_s, MeasuredTime measured_s) {
  sim::ComputeModel::GemmRate best;
  double best_error = INFINITY;
  for (int e = 100; e <= 200; ++e) {
    for (int kov = 0; kov <= 2048; kov += k_step) {
      const sim::ComputeModel::GemmRate candidate{e * 0.005, static_cast<double>(kov)};
      const double error = rms_log_error(rows, candidate, model_s, measured_s);
      if (error < best_error) best = candidate, best_error = error;
    }
  }
  return best;
}

}  // namespace racksim::testing
