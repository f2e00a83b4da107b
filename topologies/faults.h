// Faults as what-ifs (the scenario's `faults { ... }`, docs/faults.md), resolved once into
// checked values: what the cluster builder and the engine apply.
//
//   straggler      rank r's GPU kernels take (1 + slowdown) x their modelled time
//   degraded link  rank r's NIC links (or its NVLink port) at bandwidth_factor x their rate
//   dead NIC       port p of node n is down: NCCL gives its GPUs the node's nearest other port
//                  of the same network (nic_selection.h), which carries their traffic too
//   slow host      node n's host (CPU) work takes factor x its time
//   GPU spread     every GPU's kernels take (1 + relative_sd x z) x their modelled time, z a
//                  standard normal of its own (identical GPUs are not equally fast)
//
// Ranks sit on GPUs in order (rank r on GPU r), so a rank index is a global GPU index.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/scenario.pb.h"

namespace racksim::topo {

struct StragglerFault {
  uint32_t gpu = 0;
  double slowdown = 0;
};

enum class FaultPort : uint8_t { kNic, kScaleUp };

struct DegradedLinkFault {
  uint32_t gpu = 0;
  FaultPort port = FaultPort::kNic;
  double bandwidth_factor = 1;
};

struct DeadNicFault {
  int node = 0;
  int port = 0;
};

struct SlowHostFault {
  int node = 0;
  double factor = 1;
};

// The spread of identical GPUs' speeds (faults.gpu_spread).
struct GpuSpread {
  double relative_sd = 0;
  uint64_t seed = 0;
  // GPU `gpu`'s factor on its kernels' durations: 1 + relative_sd x z, z a standard normal drawn
  // from the seed and the GPU's index alone (splitmix64, then Box-Muller), at least 0.1.
  double factor(uint32_t gpu) const;
};

struct Faults {
  std::vector<StragglerFault> stragglers;
  std::vector<DegradedLinkFault> degraded_links;
  std::vector<DeadNicFault> dead_nics;
  std::vector<SlowHostFault> slow_hosts;
  std::optional<GpuSpread> spread;

  bool empty() const {
    return stragglers.empty() && degraded_links.empty() && dead_nics.empty() &&
           slow_hosts.empty() && !spread;
  }
  // The ports of `node` that are down.
  std::vector<int> dead_ports(int node) const;
  // Per GPU: the factor on its kernels' durations (1 + slowdown; several stragglers on one GPU
  // multiply, and the spread's factor with them).
  std::vector<double> gpu_time_factors(size_t gpus) const;
  // Per GPU: the factor on its host work's durations (its node's slow-host factor).
  std::vector<double> host_time_factors(size_t gpus, int gpus_per_node) const;
};

// The scenario's faults section, already validated (app/faults_validate.h).
Faults resolve_faults(const config::Faults& faults);

std::string_view to_string(FaultPort port);

}  // namespace racksim::topo
