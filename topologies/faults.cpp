#include "topologies/faults.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace racksim::topo {

namespace {

// splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014): a fixed function of its input, so a draw is the same on every platform.
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The top 53 bits of `bits` as a double in [0, 1).
double unit_interval(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// A GPU's kernels never run more than ten times faster than the median's.
constexpr double kLeastFactor = 0.1;

}  // namespace

double GpuSpread::factor(uint32_t gpu) const {
  const uint64_t first = splitmix64(seed ^ splitmix64(gpu));
  const uint64_t second = splitmix64(first);
  const double u1 = 1 - unit_interval(first);  // (0, 1]: its logarithm is finite
  const double u2 = unit_interval(second);
  const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  return std::max(kLeastFactor, 1 + relative_sd * z);
}

std::vector<int> Faults::dead_ports(int node) const {
  std::vector<int> ports;
  for (const DeadNicFault& f : dead_nics) {
    if (f.node == node) ports.push_back(f.port);
  }
  return ports;
}

std::vector<double> Faults::gpu_time_factors(size_t gpus) const {
  std::vector<double> factors(gpus, 1.0);
  for (const StragglerFault& f : stragglers) {
    if (f.gpu < gpus) factors[f.gpu] *= 1 + f.slowdown;
  }
  if (spread) {
    for (size_t g = 0; g < gpus; ++g) factors[g] *= spread->factor(static_cast<uint32_t>(g));
  }
  return factors;
}

std::vector<double> Faults::host_time_factors(size_t gpus, int gpus_per_node) const {
  std::vector<double> factors(gpus, 1.0);
  for (const SlowHostFault& f : slow_hosts) {
    for (int g = 0; g < gpus_per_node; ++g) {
      const size_t gpu = static_cast<size_t>(f.node) * gpus_per_node + g;
      if (gpu < gpus) factors[gpu] *= f.factor;
    }
  }
  return factors;
}

Faults resolve_faults(const config::Faults& section) {
  Faults faults;
  for (const auto& s : section.straggler()) {
    faults.stragglers.push_back({static_cast<uint32_t>(s.rank()), s.slowdown()});
  }
  for (const auto& d : section.degraded_link()) {
    const FaultPort port =
        d.port() == config::DegradedLink::SCALE_UP ? FaultPort::kScaleUp : FaultPort::kNic;
    faults.degraded_links.push_back({static_cast<uint32_t>(d.rank()), port, d.bandwidth_factor()});
  }
  for (const auto& n : section.dead_nic()) faults.dead_nics.push_back({n.node(), n.port()});
  for (const auto& h : section.slow_host()) faults.slow_hosts.push_back({h.node(), h.factor()});
  if (section.has_gpu_spread()) {
    faults.spread = GpuSpread{section.gpu_spread().relative_sd(), section.gpu_spread().seed()};
  }
  return faults;
}

std::string_view to_string(FaultPort port) {
  return port == FaultPort::kScaleUp ? "scale_up" : "nic";
}

}  // namespace racksim::topo
