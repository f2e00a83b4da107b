// The SimGrid platform built from a Topology.
//
// All hosts and links live in one custom netzone whose routing asks the Router (Boost.Graph
// shortest paths with deterministic ECMP), so routes are computed for the pairs that actually
// communicate instead of an all-pairs table. Each graph edge becomes one SimGrid split-duplex
// link (SHARED in each direction), each GPU one host whose speed is its peak FLOP/s, each CPU
// socket one host (the end of host <-> device copies; it computes nothing).
//
// With NVLS hardware each GPU also gets an "NVLS" host at the same place in the graph (same
// routes): flows sent from it run at most at the NVLS port rate (a bandwidth factor of
// nvls rate / port rate, SimGrid's per-flow cap), because NVLS all-reduce is paced by the
// switch's reductions, not by the links, and leaves the rest of the port to other traffic.
//
// Call build_platform once, after the s4u::Engine exists and is configured and before any
// other zone is created. SimGrid owns what is created; the Platform keeps pointers to it and
// must outlive the simulation (it owns the router the zone calls).
#pragma once

#include <memory>
#include <vector>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "topologies/routing.h"
#include "topologies/topology_graph.h"

namespace racksim::topo {

class Platform {
 public:
  simgrid::s4u::Host* gpu_host(uint32_t gpu) const { return gpu_hosts_[gpu]; }
  size_t num_gpus() const { return gpu_hosts_.size(); }
  // The host of a CPU socket, by global NUMA node (Topology::cpus).
  simgrid::s4u::Host* cpu_host(uint32_t numa_node) const { return cpu_hosts_[numa_node]; }
  size_t num_cpus() const { return cpu_hosts_.size(); }
  // The GPU's NVLS host, or nullptr without NVLS.
  simgrid::s4u::Host* nvls_host(uint32_t gpu) const {
    return nvls_hosts_.empty() ? nullptr : nvls_hosts_[gpu];
  }
  const Topology& topology() const { return *topology_; }
  Router& router() { return *router_; }

  // The SimGrid link carrying `hop` (the half of the edge's split-duplex link for its direction).
  simgrid::s4u::Link* link(const Hop& hop) const;
  // The split-duplex link of an edge, by Edge::index.
  simgrid::s4u::SplitDuplexLink* edge_link(uint32_t edge) const { return edge_links_[edge]; }

 private:
  friend std::unique_ptr<Platform> build_platform(const Topology& topology, double gpu_flops_per_s);
  const Topology* topology_ = nullptr;
  std::unique_ptr<Router> router_;
  std::vector<simgrid::s4u::Host*> gpu_hosts_;
  std::vector<simgrid::s4u::Host*> cpu_hosts_;
  std::vector<simgrid::s4u::Host*> nvls_hosts_;
  std::vector<simgrid::s4u::SplitDuplexLink*> edge_links_;
};

// `topology` must outlive the returned Platform.
std::unique_ptr<Platform> build_platform(const Topology& topology, double gpu_flops_per_s);

}  // namespace racksim::topo
