#include "topologies/faults.h"

namespace racksim::topo {

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
  return faults;
}

std::string_view to_string(FaultPort port) {
  return port == FaultPort::kScaleUp ? "scale_up" : "nic";
}

}  // namespace racksim::topo
