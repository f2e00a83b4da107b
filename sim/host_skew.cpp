#include "sim/host_skew.h"

#include <cmath>

namespace racksim::sim {

double expected_max_of_normals(int n) {
  if (n <= 1) return 0;
  // E[max] = integral of x * n * phi(x) * Phi(x)^(n-1) dx, by Simpson's rule over [-10, 10]:
  // beyond it the integrand is below 1e-20 for any n a cluster has.
  constexpr int kSteps = 4000;
  constexpr double kLow = -10, kHigh = 10;
  const double h = (kHigh - kLow) / kSteps;
  const double inv_sqrt_2pi = 1 / std::sqrt(2 * M_PI);
  auto f = [&](double x) {
    const double pdf = inv_sqrt_2pi * std::exp(-0.5 * x * x);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    return x * n * pdf * std::pow(cdf, n - 1);
  };
  double sum = f(kLow) + f(kHigh);
  for (int i = 1; i < kSteps; ++i) sum += f(kLow + i * h) * (i % 2 == 1 ? 4 : 2);
  return sum * h / 3;
}

}  // namespace racksim::sim
