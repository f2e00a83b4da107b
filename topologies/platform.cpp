#include "topologies/platform.h"

#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/NetZone.hpp>

namespace racksim::topo {
namespace {

// A GPU sending to itself (a degenerate collective, or a zero-byte dependency) crosses no
// wire: it goes through one FATPIPE link this fast, so it completes almost at once. Without
// a link SimGrid aborts the simulation ("no connecting path").
constexpr double kLoopbackBytesPerS = 1e15;

// CPU hosts only end copies; their speed is never used.
constexpr double kCpuFlopsPerS = 1e12;

using simgrid::kernel::resource::StandardLinkImpl;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::NetZoneImpl;
using simgrid::kernel::routing::Route;

// The one netzone holding the whole cluster. SimGrid asks it for the route of every
// communication; it answers from the Router, converted to SimGrid links and cached per pair.
class GraphZone final : public NetZoneImpl {
 public:
  GraphZone(const std::string& name, Platform& platform) : NetZoneImpl(name), platform_(platform) {}

  // Records which graph vertex a host created in this zone stands for.
  void map_host(const simgrid::s4u::Host* host, VertexId vertex) {
    const unsigned long id = host->get_netpoint()->id();
    if (id >= vertex_of_netpoint_.size()) vertex_of_netpoint_.resize(id + 1, kNoVertex);
    vertex_of_netpoint_[id] = vertex;
  }

  void set_loopback(simgrid::s4u::Link* loopback) { loopback_ = loopback->get_impl(); }

  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into,
                       double* latency) override {
    if (src == dst) {  // SimGrid aborts on an empty route with no latency
      into->link_list_.push_back(loopback_);
      return;
    }
    const CachedRoute& route = cached_route(src, dst);
    into->link_list_.insert(into->link_list_.end(), route.links.begin(), route.links.end());
    if (latency != nullptr) *latency += route.latency_s;
  }

 private:
  static constexpr VertexId kNoVertex = std::numeric_limits<VertexId>::max();

  struct CachedRoute {
    std::vector<StandardLinkImpl*> links;
    double latency_s = 0;
  };

  const CachedRoute& cached_route(const NetPoint* src, const NetPoint* dst) {
    const uint64_t key = (static_cast<uint64_t>(src->id()) << 32) | dst->id();
    if (auto it = routes_.find(key); it != routes_.end()) return it->second;

    const std::vector<Hop>& hops = platform_.router().route(vertex_of(src), vertex_of(dst));
    CachedRoute route;
    route.links.reserve(hops.size());
    for (const Hop& hop : hops) {
      simgrid::s4u::Link* link = platform_.link(hop);
      route.links.push_back(link->get_impl());
      route.latency_s += link->get_latency();
    }
    return routes_.emplace(key, std::move(route)).first->second;
  }

  VertexId vertex_of(const NetPoint* point) const {
    const unsigned long id = point->id();
    if (id >= vertex_of_netpoint_.size() || vertex_of_netpoint_[id] == kNoVertex) {
      throw std::logic_error(
          fmt::format("netpoint {} is not a vertex of the cluster graph", point->get_name()));
    }
    return vertex_of_netpoint_[id];
  }

  Platform& platform_;
  StandardLinkImpl* loopback_ = nullptr;
  std::vector<VertexId> vertex_of_netpoint_;  // indexed by NetPoint::id(), its rank in the zone
  std::unordered_map<uint64_t, CachedRoute> routes_;  // key: src id << 32 | dst id
};

// NVLS hosts share their GPU's vertex (and so its routes); a bandwidth factor slows their flows
// to the NVLS port rate.
void add_nvls_hosts(GraphZone& zone, const Topology& topology, double gpu_flops_per_s,
                    std::vector<simgrid::s4u::Host*>& hosts) {
  std::unordered_set<const simgrid::s4u::Host*> nvls;
  for (VertexId gpu : topology.gpus) {
    simgrid::s4u::Host* host =
        zone.create_host(topology.graph[gpu].name + ".nvls", {gpu_flops_per_s});
    zone.map_host(host, gpu);
    hosts.push_back(host);
    nvls.insert(host);
  }
  const double factor =
      topology.spec.scale_up.nvls_bytes_per_s / topology.spec.scale_up.port_bytes_per_s;
  zone.get_iface()->get_network_model()->set_bw_factor_cb(
      [nvls = std::move(nvls), factor](double, const simgrid::s4u::Host* src,
                                       const simgrid::s4u::Host*,
                                       const std::vector<simgrid::s4u::Link*>&,
                                       const std::unordered_set<simgrid::s4u::NetZone*>&) {
        return nvls.contains(src) ? factor : 1.0;
      });
}

std::string link_name(const Graph& graph, EdgeId edge) {
  return fmt::format("{}-{}", graph[boost::source(edge, graph)].name,
                     graph[boost::target(edge, graph)].name);
}

}  // namespace

simgrid::s4u::Link* Platform::link(const Hop& hop) const {
  const simgrid::s4u::SplitDuplexLink* duplex = edge_links_[hop.edge];
  return hop.forward ? duplex->get_link_up() : duplex->get_link_down();
}

std::unique_ptr<Platform> build_platform(const Topology& topology, double gpu_flops_per_s) {
  auto platform = std::make_unique<Platform>();
  platform->topology_ = &topology;
  platform->router_ = std::make_unique<Router>(topology);

  // SimGrid takes ownership of the zone (the engine destroys its root zone). Being the first
  // zone created, it becomes the root and instantiates the configured models.
  auto* zone = std::make_unique<GraphZone>("racksim", *platform).release();

  const Graph& graph = topology.graph;
  platform->gpu_hosts_.reserve(topology.num_gpus());
  for (VertexId gpu : topology.gpus) {
    simgrid::s4u::Host* host = zone->create_host(graph[gpu].name, {gpu_flops_per_s});
    zone->map_host(host, gpu);
    platform->gpu_hosts_.push_back(host);
  }
  if (topology.spec.scale_up.nvls) {
    add_nvls_hosts(*zone, topology, gpu_flops_per_s, platform->nvls_hosts_);
  }
  platform->cpu_hosts_.reserve(topology.cpus.size());
  for (VertexId cpu : topology.cpus) {
    simgrid::s4u::Host* host = zone->create_host(graph[cpu].name, {kCpuFlopsPerS});
    zone->map_host(host, cpu);
    platform->cpu_hosts_.push_back(host);
  }

  // Links are SHARED (the default) in each direction; zone->seal() seals them and the hosts
  // (sealing them here as well would fire their creation signals twice).
  platform->edge_links_.reserve(topology.edges.size());
  for (EdgeId edge : topology.edges) {
    const Edge& props = graph[edge];
    simgrid::s4u::SplitDuplexLink* link =
        zone->create_split_duplex_link(link_name(graph, edge), {props.bytes_per_s});
    link->set_latency(props.latency_s);
    platform->edge_links_.push_back(link);
  }
  zone->set_loopback(zone->create_link("loopback", {kLoopbackBytesPerS})
                         ->set_sharing_policy(simgrid::s4u::Link::SharingPolicy::FATPIPE));
  zone->seal();
  return platform;
}

}  // namespace racksim::topo
