#include "topologies/node_builder.h"

#include <fmt/format.h>

namespace racksim::topo {
namespace {

// Spreads `count` items evenly over `bins` in order: item i goes to bin i x bins / count.
int bin_of(int item, int count, int bins) {
  return static_cast<int>(static_cast<int64_t>(item) * bins / count);
}

class NodeBuilder {
 public:
  NodeBuilder(GraphBuilder& builder, const ClusterSpec& spec, int node)
      : b_(builder), t_(builder.topology()), spec_(spec), node_spec_(spec.node), node_(node) {}

  std::vector<VertexId> build(VertexId scale_up_switch) {
    add_gpus();
    if (node_spec_.kind == NodeKind::kMesh) {
      add_mesh();
    } else {
      add_switch_links(scale_up_switch);
    }
    if (!node_spec_.has_host) return {};
    add_cpus();
    if (node_spec_.kind == NodeKind::kNvlTray) {
      add_c2c();
    } else {
      add_pcie_switches();
    }
    add_nics();
    return nics_;
  }

 private:
  int socket_of_gpu(int g) const {
    return node_spec_.has_host ? bin_of(g, node_spec_.gpus, node_spec_.sockets) : 0;
  }

  void add_gpus() {
    for (int g = 0; g < node_spec_.gpus; ++g) {
      Vertex v{VertexKind::kGpu, fmt::format("n{}.gpu{}", node_, g), node_, g};
      v.socket = static_cast<int16_t>(socket_of_gpu(g));
      gpus_.push_back(b_.add_vertex(std::move(v)));
      t_.gpus.push_back(gpus_.back());
      GpuAttachment& a = t_.attachment.emplace_back();
      if (node_spec_.has_host) a.numa_node = node_ * node_spec_.sockets + socket_of_gpu(g);
    }
  }

  // Half the GPU -> GPU latency on each side, so that GPU -> switch -> GPU adds up to
  // scale_up.latency_s.
  void add_switch_links(VertexId scale_up_switch) {
    const ScaleUpSpec& up = spec_.scale_up;
    for (int g = 0; g < node_spec_.gpus; ++g) {
      b_.add_edge(gpus_[g], scale_up_switch, up.port_bytes_per_s, up.latency_s / 2,
                  LinkClass::kNvlink);
      attachment(g).scale_up = scale_up_switch;
    }
  }

  // Each GPU's port block caps the sum of its links; the pairwise links carry no latency of
  // their own, so GPU -> port -> port -> GPU adds up to scale_up.latency_s.
  void add_mesh() {
    const ScaleUpSpec& up = spec_.scale_up;
    std::vector<VertexId> ports;
    for (int g = 0; g < node_spec_.gpus; ++g) {
      ports.push_back(b_.add_vertex(
          Vertex{VertexKind::kMeshPort, fmt::format("n{}.gpu{}.xgmi", node_, g), node_, g}));
      b_.add_edge(gpus_[g], ports.back(), up.port_bytes_per_s, up.latency_s / 2,
                  LinkClass::kNvlink);
      attachment(g).scale_up = ports.back();
    }
    for (int a = 0; a < node_spec_.gpus; ++a) {
      for (int c = a + 1; c < node_spec_.gpus; ++c) {
        b_.add_edge(ports[a], ports[c], up.mesh_link_bytes_per_s, 0, LinkClass::kNvlink);
      }
    }
  }

  void add_cpus() {
    for (int s = 0; s < node_spec_.sockets; ++s) {
      Vertex v{VertexKind::kCpu, fmt::format("n{}.cpu{}", node_, s), node_, s};
      v.socket = static_cast<int16_t>(s);
      cpus_.push_back(b_.add_vertex(std::move(v)));
      t_.cpus.push_back(cpus_.back());
    }
    // Every pair of sockets is linked (two-socket servers: one UPI / xGMI bundle).
    for (int s = 0; s < node_spec_.sockets; ++s) {
      for (int o = s + 1; o < node_spec_.sockets; ++o) {
        b_.add_edge(cpus_[s], cpus_[o], node_spec_.inter_socket_bytes_per_s,
                    node_spec_.inter_socket_latency_s, LinkClass::kInterSocket);
      }
    }
  }

  void add_pcie_switches() {
    const int per_socket = node_spec_.pcie_switches_per_socket;
    const int switches = node_spec_.sockets * per_socket;
    for (int k = 0; k < switches; ++k) {
      Vertex v{VertexKind::kPcieSwitch, fmt::format("n{}.pcie{}", node_, k), node_, k};
      v.socket = static_cast<int16_t>(k / per_socket);
      pcie_switches_.push_back(b_.add_vertex(std::move(v)));
      b_.add_edge(pcie_switches_.back(), cpus_[k / per_socket], node_spec_.pcie_bytes_per_s,
                  node_spec_.pcie_latency_s, LinkClass::kPcie);
    }
    for (int g = 0; g < node_spec_.gpus; ++g) {
      b_.add_edge(gpus_[g], pcie_switches_[bin_of(g, node_spec_.gpus, switches)],
                  node_spec_.pcie_bytes_per_s, node_spec_.pcie_latency_s, LinkClass::kPcie);
    }
  }

  void add_c2c() {
    for (int g = 0; g < node_spec_.gpus; ++g) {
      b_.add_edge(gpus_[g], cpus_[socket_of_gpu(g)], node_spec_.c2c_bytes_per_s,
                  node_spec_.c2c_latency_s, LinkClass::kC2c);
    }
  }

  // NIC k hangs off the PCIe switch (or, in a tray, the Grace socket) that its index spreads
  // it to, so with one NIC per GPU it shares GPU k's switch.
  void add_nics() {
    const int count = static_cast<int>(node_spec_.ports.size());
    const bool trays = node_spec_.kind == NodeKind::kNvlTray;
    const int parents = trays ? node_spec_.sockets : static_cast<int>(pcie_switches_.size());
    for (int k = 0; k < count; ++k) {
      const PortSpec& port = node_spec_.ports[k];
      const int parent = bin_of(k, count, parents);
      Vertex v{VertexKind::kNic, nic_name(k), node_, k};
      v.socket =
          static_cast<int16_t>(trays ? parent : parent / node_spec_.pcie_switches_per_socket);
      v.link_layer = port.link_layer;
      v.bits_per_s = port.bits_per_s;
      nics_.push_back(b_.add_vertex(std::move(v)));
      b_.add_edge(trays ? cpus_[parent] : pcie_switches_[parent], nics_.back(),
                  node_spec_.pcie_bytes_per_s, node_spec_.pcie_latency_s, LinkClass::kPcie);
    }
  }

  std::string nic_name(int port) const {
    const int per_gpu = node_spec_.nics_per_gpu;
    if (per_gpu <= 1) return fmt::format("n{}.nic{}", node_, port);
    return fmt::format("n{}.nic{}.{}", node_, port / per_gpu, port % per_gpu);
  }

  GpuAttachment& attachment(int g) {
    return t_.attachment[static_cast<size_t>(node_) * node_spec_.gpus + g];
  }

  GraphBuilder& b_;
  Topology& t_;
  const ClusterSpec& spec_;
  const NodeSpec& node_spec_;
  int node_;
  std::vector<VertexId> gpus_, cpus_, pcie_switches_, nics_;
};

}  // namespace

std::vector<VertexId> build_node(GraphBuilder& builder, const ClusterSpec& spec, int node,
                                 VertexId scale_up_switch) {
  return NodeBuilder(builder, spec, node).build(scale_up_switch);
}

}  // namespace racksim::topo
