#include "config/faults_validate.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "topologies/cluster_spec.h"
#include "topologies/nic_selection.h"

namespace racksim::config {
namespace {

constexpr double kMaxSlowdown = 100;     // kernels 101 x as long: far past any real straggler
constexpr double kMaxHostFactor = 1000;  // host work 1000 x as long

// What is wrong with a value that must lie within [low, high] (or (low, high]), if anything.
std::optional<std::string> range_error(const char* name, bool present, double value, double low,
                                       double high, bool low_open) {
  if (!present) return fmt::format("missing {}", name);
  const bool above_low = low_open ? value > low : value >= low;
  if (above_low && value <= high) return std::nullopt;
  return fmt::format("{} must be in {}{}, {}], got {}", name, low_open ? "(" : "[", low, high,
                     value);
}

class FaultChecker {
 public:
  FaultChecker(const config::Scenario& scenario, const SourceMap& sources)
      : sources_(sources),
        spec_(topo::cluster_spec(scenario.hardware())),
        gpus_(int64_t{spec_.nodes} * spec_.node.gpus) {}

  [[noreturn]] void fail(const std::string& field, int entry, const std::string& detail) const {
    fail(field, fmt::format("entry {}: {}", entry, detail));
  }
  [[noreturn]] void fail(const std::string& field, const std::string& detail) const {
    throw InputError(sources_.find(field), field, detail);
  }

  void rank(const std::string& field, int entry, bool present, int64_t rank) const {
    if (!present) fail(field, entry, "missing rank: the GPU (0-based, rank r on GPU r)");
    if (rank < 0 || rank >= gpus_) {
      fail(field, entry,
           fmt::format("rank {} is not one of the cluster's {} GPUs (0 .. {})", rank, gpus_,
                       gpus_ - 1));
    }
  }

  void node(const std::string& field, int entry, bool present, int64_t node) const {
    if (!present) fail(field, entry, "missing node: the server (0-based)");
    if (node < 0 || node >= spec_.nodes) {
      fail(field, entry,
           fmt::format("node {} is not one of the cluster's {} nodes (0 .. {})", node, spec_.nodes,
                       spec_.nodes - 1));
    }
  }

  // An entry's value `name` (of a repeated fault) within [low, high], or (low, high].
  void in_range(const std::string& field, int entry, const char* name, bool present, double value,
                double low, double high, bool low_open) const {
    if (auto error = range_error(name, present, value, low, high, low_open)) {
      fail(field, entry, *error);
    }
  }
  // A field of a single fault section within [low, high].
  void in_range(const std::string& field, const char* name, bool present, double value, double low,
                double high) const {
    if (auto error = range_error(name, present, value, low, high, false)) fail(field, *error);
  }

  const topo::ClusterSpec& spec() const { return spec_; }

 private:
  const SourceMap& sources_;
  topo::ClusterSpec spec_;
  int64_t gpus_;
};

void check_stragglers(const config::Faults& faults, const FaultChecker& check) {
  const std::string field = "faults.straggler";
  for (int i = 0; i < faults.straggler_size(); ++i) {
    const auto& s = faults.straggler(i);
    check.rank(field, i, s.has_rank(), s.rank());
    check.in_range(field, i, "slowdown", s.has_slowdown(), s.slowdown(), 0, kMaxSlowdown, false);
  }
}

void check_degraded_links(const config::Faults& faults, const FaultChecker& check) {
  const std::string field = "faults.degraded_link";
  for (int i = 0; i < faults.degraded_link_size(); ++i) {
    const auto& d = faults.degraded_link(i);
    check.rank(field, i, d.has_rank(), d.rank());
    check.in_range(field, i, "bandwidth_factor", d.has_bandwidth_factor(), d.bandwidth_factor(), 0,
                   1, true);
    if (d.port() != config::DegradedLink::SCALE_UP && check.spec().node.ports.empty()) {
      check.fail(field, i, "port NIC, but the nodes have no scale-out NICs");
    }
  }
}

void check_dead_nics(const config::Faults& faults, const FaultChecker& check) {
  const std::string field = "faults.dead_nic";
  const auto& ports = check.spec().node.ports;
  const topo::LinkLayer network = topo::network_link_layer(ports);
  for (int i = 0; i < faults.dead_nic_size(); ++i) {
    const auto& d = faults.dead_nic(i);
    check.node(field, i, d.has_node(), d.node());
    if (!d.has_port()) check.fail(field, i, "missing port: the port (rail) index in the node");
    if (d.port() < 0 || d.port() >= static_cast<int>(ports.size())) {
      check.fail(
          field, i,
          fmt::format("port {} is not one of the node's {} NIC ports", d.port(), ports.size()));
    }
  }
  // Each node keeps a port on the network NCCL uses, or its GPUs could not leave it.
  for (int i = 0; i < faults.dead_nic_size(); ++i) {
    const int node = faults.dead_nic(i).node();
    size_t alive = 0;
    for (size_t p = 0; p < ports.size(); ++p) {
      const bool dead = std::any_of(faults.dead_nic().begin(), faults.dead_nic().end(),
                                    [&](const config::DeadNic& d) {
                                      return d.node() == node && d.port() == static_cast<int>(p);
                                    });
      const bool usable = check.spec().treat_all_nics_as_ib || ports[p].link_layer == network;
      if (!dead && usable) ++alive;
    }
    if (alive == 0) {
      check.fail(field, i, fmt::format("node {} has no {} port left", node, to_string(network)));
    }
  }
}

void check_slow_hosts(const config::Faults& faults, const FaultChecker& check) {
  const std::string field = "faults.slow_host";
  for (int i = 0; i < faults.slow_host_size(); ++i) {
    const auto& h = faults.slow_host(i);
    check.node(field, i, h.has_node(), h.node());
    check.in_range(field, i, "factor", h.has_factor(), h.factor(), 1, kMaxHostFactor, false);
  }
}

// Wider than Sinha et al.'s clusters (SC'22) by far: a 20 % spread puts a 1,000-GPU step's
// slowest GPU about 65 % behind the median.
constexpr double kMaxRelativeSd = 0.2;

void check_gpu_spread(const config::Faults& faults, const FaultChecker& check) {
  if (!faults.has_gpu_spread()) return;
  const auto& spread = faults.gpu_spread();
  check.in_range("faults.gpu_spread.relative_sd", "relative_sd", spread.has_relative_sd(),
                 spread.relative_sd(), 0, kMaxRelativeSd);
}

}  // namespace

void validate_faults(const config::Scenario& scenario, const SourceMap& sources) {
  if (!scenario.has_faults()) return;
  const FaultChecker check(scenario, sources);
  check_stragglers(scenario.faults(), check);
  check_degraded_links(scenario.faults(), check);
  check_dead_nics(scenario.faults(), check);
  check_slow_hosts(scenario.faults(), check);
  check_gpu_spread(scenario.faults(), check);
}

}  // namespace racksim::config
