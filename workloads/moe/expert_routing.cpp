#include "workloads/moe/expert_routing.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "common/number.h"

namespace racksim {

namespace {

std::vector<double> normalised(std::vector<double> v) {
  const double total = std::accumulate(v.begin(), v.end(), 0.0);
  for (double& x : v) x /= total;
  return v;
}

std::vector<double> zipf_shares(int64_t experts, double exponent, uint64_t seed) {
  std::vector<double> shares(experts);
  for (int64_t k = 0; k < experts; ++k)
    shares[k] = 1.0 / std::pow(static_cast<double>(k + 1), exponent);
  // Which expert is the k-th most popular: a seeded Fisher-Yates shuffle on the raw engine
  // output, so the order is the same with every standard library.
  std::mt19937_64 engine(seed);
  for (int64_t i = experts - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(engine() % static_cast<uint64_t>(i + 1));
    std::swap(shares[i], shares[j]);
  }
  return normalised(shares);
}

std::vector<std::vector<double>> read_counts(const std::string& path, int64_t experts) {
  std::ifstream in(path);
  if (!in) {
    throw InputError({path, 0, 0}, "training.routing_file", "cannot read the routing file");
  }
  std::vector<std::vector<double>> rows;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream fields(line);
    std::vector<double> row;
    for (std::string field; fields >> field;) {
      const double v = parse_finite_number(field).value_or(-1);
      if (!(v >= 0)) {
        throw InputError({path, number, 0}, "training.routing_file",
                         fmt::format("'{}' is not a token count", field));
      }
      row.push_back(v);
    }
    if (row.empty()) continue;
    if (static_cast<int64_t>(row.size()) != experts ||
        std::accumulate(row.begin(), row.end(), 0.0) <= 0) {
      throw InputError({path, number, 0}, "training.routing_file",
                       fmt::format("expected {} non-negative token counts (one per expert), not "
                                   "all zero; got {}",
                                   experts, row.size()));
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw InputError({path, 0, 0}, "training.routing_file", "no token counts");
  return rows;
}

}  // namespace

std::vector<double> expert_shares(const config::Training& t, int64_t experts, int moe_layer) {
  switch (t.routing()) {
    case config::Training::ZIPF:
      return zipf_shares(experts, t.routing_zipf_exponent(),
                         static_cast<uint64_t>(t.routing_seed()) * 1000003ULL + moe_layer);
    case config::Training::FROM_FILE: {
      const auto rows = read_counts(t.routing_file(), experts);
      return normalised(rows[static_cast<size_t>(moe_layer) % rows.size()]);
    }
    default:
      return std::vector<double>(experts, 1.0 / static_cast<double>(experts));
  }
}

std::vector<double> rank_shares(const std::vector<double>& expert_shares, int ep) {
  const size_t per_rank = expert_shares.size() / static_cast<size_t>(ep);
  std::vector<double> shares(ep, 0.0);
  for (size_t e = 0; e < expert_shares.size(); ++e) {
    shares[std::min(e / per_rank, shares.size() - 1)] += expert_shares[e];
  }
  return shares;
}

double imbalance(const std::vector<double>& rank_shares) {
  if (rank_shares.empty()) return 1;
  const double mean =
      std::accumulate(rank_shares.begin(), rank_shares.end(), 0.0) / rank_shares.size();
  return *std::max_element(rank_shares.begin(), rank_shares.end()) / mean;
}

}  // namespace racksim
