#include "topologies/single_domain.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace racksim::topo {

Topology single_domain(std::string_view what, uint32_t gpus, double link_bytes_per_s,
                       double link_latency_s) {
  if (gpus < 1) throw std::invalid_argument(fmt::format("{}: at least 1 GPU", what));
  if (!(link_bytes_per_s > 0) || !std::isfinite(link_bytes_per_s)) {
    throw std::invalid_argument(
        fmt::format("{}: link bandwidth {} is not a finite value > 0", what, link_bytes_per_s));
  }
  if (!(link_latency_s >= 0) || !std::isfinite(link_latency_s)) {
    throw std::invalid_argument(
        fmt::format("{}: link latency {} is not a finite value >= 0", what, link_latency_s));
  }
  Topology t;
  t.nodes = 1;
  t.gpus_per_node = static_cast<int>(gpus);
  t.spec.nodes = 1;
  t.spec.node.gpus = static_cast<int>(gpus);
  t.spec.node.has_host = false;
  t.spec.scale_up.domain_size = static_cast<int>(gpus);
  t.spec.scale_up.port_bytes_per_s = link_bytes_per_s;
  t.spec.scale_up.latency_s = link_latency_s;
  return t;
}

}  // namespace racksim::topo
