// The hardware section's checks: positive sizes and rates, latencies and efficiencies in range,
// an NVLink domain of whole nodes, host, fabric tiers, NIC ports and the compute model's fields.
#include "config/hardware_validate.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "config/power_cost_validate.h"
#include "config/scenario_limits.h"

namespace racksim::config {
namespace {

// The NVLink domain must hold whole nodes; a mesh ends at its node.
void check_scale_up_shape(const config::Hardware& hw, const Checker& check) {
  const config::ScaleUp& up = hw.scale_up();
  const int gpus = hw.gpus_per_node();
  if (up.has_domain_size() && gpus > 0 && up.domain_size() > 0 &&
      (up.domain_size() < gpus || up.domain_size() % gpus != 0)) {
    check.fail("hardware.scale_up.domain_size",
               fmt::format("{} GPUs per NVLink domain is not a whole number of {}-GPU nodes",
                           up.domain_size(), gpus));
  }
  if (hw.node_kind() == config::Hardware::MESH && up.has_domain_size() &&
      up.domain_size() != gpus) {
    check.fail("hardware.scale_up.domain_size",
               fmt::format("a MESH node's domain is its {} GPUs, got {}", gpus, up.domain_size()));
  }
  if (up.has_nvls_efficiency()) {
    check.efficiency("hardware.scale_up.nvls_efficiency", true, up.nvls_efficiency());
  }
  if (up.has_aggregate_efficiency()) {
    check.efficiency("hardware.scale_up.aggregate_efficiency", true, up.aggregate_efficiency());
  }
  check.positive_if_set("hardware.scale_up.mesh_link_bytes_per_s", up.has_mesh_link_bytes_per_s(),
                        up.mesh_link_bytes_per_s());
}

// Sockets (NUMA nodes), their PCIe switches, and the links between them.
void check_host(const config::Hardware& hw, const Checker& check) {
  const config::Host& host = hw.host();
  check.positive_if_set("hardware.host.sockets", host.has_sockets(), host.sockets());
  if (host.sockets() > 0 && hw.gpus_per_node() % host.sockets() != 0) {
    check.fail(
        "hardware.host.sockets",
        fmt::format(
            "{} GPUs per node do not split evenly over {} sockets (set hardware.host.sockets)",
            hw.gpus_per_node(), host.sockets()));
  }
  check.positive_if_set("hardware.host.pcie_switches_per_socket",
                        host.has_pcie_switches_per_socket(), host.pcie_switches_per_socket());
  if (host.sockets() > 1) {
    check.positive("hardware.host.inter_socket_bytes_per_s", host.has_inter_socket_bytes_per_s(),
                   host.inter_socket_bytes_per_s());
  }
  check.latency("hardware.host.inter_socket_latency_s", host.inter_socket_latency_s());
  if (hw.node_kind() == config::Hardware::NVL_TRAY) {
    check.positive("hardware.host.c2c_bytes_per_s", host.has_c2c_bytes_per_s(),
                   host.c2c_bytes_per_s());
  }
  check.latency("hardware.host.c2c_latency_s", host.c2c_latency_s());
  if (host.has_offload_socket() &&
      (host.offload_socket() < 0 || host.offload_socket() >= std::max(1, host.sockets()))) {
    check.fail("hardware.host.offload_socket",
               fmt::format("socket {} does not exist: a node has {} socket(s), numbered from 0",
                           host.offload_socket(), std::max(1, host.sockets())));
  }
  check.positive_if_set("hardware.host.pipeline_handoff_bytes_per_s",
                        host.has_pipeline_handoff_bytes_per_s(),
                        host.pipeline_handoff_bytes_per_s());
  if (!(host.memory_bytes() >= 0)) {
    check.fail("hardware.host.memory_bytes",
               fmt::format("must be >= 0 bytes, got {}", host.memory_bytes()));
  }
}

void check_fabric_tiers(const config::Hardware& hw, const Checker& check) {
  const config::ScaleOut& out = hw.scale_out();
  if (out.has_tiers() && out.tiers() != 2 && out.tiers() != 3) {
    check.fail("hardware.scale_out.tiers", fmt::format("must be 2 or 3, got {}", out.tiers()));
  }
  if (out.tiers() == 3) {
    check.positive("hardware.scale_out.units_per_pod", out.has_units_per_pod(),
                   out.units_per_pod());
    check.positive("hardware.scale_out.cores", out.has_cores(), out.cores());
  }
  check.positive_if_set("hardware.scale_out.pod_oversubscription", out.has_pod_oversubscription(),
                        out.pod_oversubscription());
  if (out.switch_radix() < 0) {
    check.fail("hardware.scale_out.switch_radix",
               fmt::format("must be a port count >= 0, got {}", out.switch_radix()));
  }
  if (out.has_ethernet_efficiency()) {
    check.efficiency("hardware.scale_out.ethernet_efficiency", true, out.ethernet_efficiency());
  }
}

void check_nic_ports(const config::Hardware& hw, const Checker& check) {
  const config::ScaleOut& out = hw.scale_out();
  const int64_t ports = int64_t{hw.gpus_per_node()} * std::max(out.nics_per_gpu(), 1);
  for (const config::NicPort& port : out.ports()) {
    if (port.index() < 0 || port.index() >= ports) {
      check.fail("hardware.scale_out.ports",
                 fmt::format("port index {} is not one of the node's {} ports (0 .. {})",
                             port.index(), ports, ports - 1));
    }
    check.positive_if_set("hardware.scale_out.ports", port.has_bits_per_s(), port.bits_per_s());
  }
}

// The compute model's efficiencies and the SMs it leaves to the kernels.
void check_compute(const config::Hardware& hw, const Checker& check) {
  const config::ComputeEfficiency& compute = hw.compute();
  check.efficiency("hardware.compute.gemm", compute.has_gemm(), compute.gemm());
  if (compute.gemm_fp8() != 0) {
    check.efficiency("hardware.compute.gemm_fp8", compute.has_gemm_fp8(), compute.gemm_fp8());
  }
  for (const auto& [field, value] :
       {std::pair{"hardware.compute.gemm_k_overhead", compute.gemm_k_overhead()},
        std::pair{"hardware.compute.gemm_fp8_k_overhead", compute.gemm_fp8_k_overhead()}}) {
    // A tile's fixed costs are worth hundreds of K elements (704 for Hopper FP8), not millions:
    // 1e9 ran and printed a step of 2.3e5 s.
    if (!(value >= 0 && value <= 1e6)) {
      check.fail(field,
                 fmt::format("must be in [0, 1e6] K elements per output tile, got {}", value));
    }
  }
  if (compute.has_gemm_unaligned()) {
    check.efficiency("hardware.compute.gemm_unaligned", true, compute.gemm_unaligned());
  }
  if (compute.gemm_sustained() != 0) {
    check.efficiency("hardware.compute.gemm_sustained", true, compute.gemm_sustained());
  }
  if (compute.has_sustained_clock_ratio()) {
    check.efficiency("hardware.compute.sustained_clock_ratio", true,
                     compute.sustained_clock_ratio());
    // Both say how far the power limit holds the clocks down: together they would count it twice.
    if (compute.gemm_sustained() != 0 && compute.sustained_clock_ratio() != 1) {
      check.fail("hardware.compute.sustained_clock_ratio",
                 "hardware.compute.gemm_sustained already holds the power limit's clock drop "
                 "for the GEMMs that fill the GPU; set one of the two (the Hopper and A100 presets "
                 "set sustained_clock_ratio: give it 1 to use gemm_sustained)");
    }
  }
  if (compute.gemm_split_k_max() < 0 || compute.gemm_split_k_max() > 64) {
    check.fail("hardware.compute.gemm_split_k_max",
               fmt::format("must be a number of splits in [0, 64] (0 or 1: none), got {}",
                           compute.gemm_split_k_max()));
  }
  check.efficiency("hardware.compute.attention", compute.has_attention(), compute.attention());
  check.efficiency("hardware.compute.elementwise", compute.has_elementwise(),
                   compute.elementwise());
  check.efficiency("hardware.compute.hbm", compute.has_hbm(), compute.hbm());
  if (compute.fp8_cast() != 0) {
    check.efficiency("hardware.compute.fp8_cast", compute.has_fp8_cast(), compute.fp8_cast());
  }
  check.latency("hardware.compute.launch_overhead_s", compute.launch_overhead_s());
  if (!(compute.gemm_half_dim() >= 0)) {
    check.fail(
        "hardware.compute.gemm_half_dim",
        fmt::format("must be >= 0 elements (0: no shape effect), got {}", compute.gemm_half_dim()));
  }
  const int reserved = compute.comm_reserved_sms();
  if (compute.has_comm_reserved_sms() && (reserved < 0 || reserved >= hw.gpu().sm_count())) {
    check.fail("hardware.compute.comm_reserved_sms",
               hw.gpu().sm_count() > 0
                   ? fmt::format("must be in [0, {}) (hardware.gpu.sm_count), got {}",
                                 hw.gpu().sm_count(), reserved)
                   : std::string("needs hardware.gpu.sm_count (how many SMs the GPU has)"));
  }
}

}  // namespace

void check_hardware(const config::Hardware& hw, const Checker& check) {
  check.positive("hardware.nodes", hw.has_nodes(), hw.nodes());
  check.positive("hardware.gpus_per_node", hw.has_gpus_per_node(), hw.gpus_per_node());

  const config::Gpu& gpu = hw.gpu();
  check.positive("hardware.gpu.bf16_flops_per_s", gpu.has_bf16_flops_per_s(),
                 gpu.bf16_flops_per_s());
  check.positive("hardware.gpu.hbm_bytes", gpu.has_hbm_bytes(), gpu.hbm_bytes());
  check.positive("hardware.gpu.hbm_bytes_per_s", gpu.has_hbm_bytes_per_s(), gpu.hbm_bytes_per_s());

  const config::ScaleUp& up = hw.scale_up();
  check.positive("hardware.scale_up.bytes_per_s", up.has_bytes_per_s(), up.bytes_per_s());
  check.latency("hardware.scale_up.latency_s", up.latency_s());
  check.efficiency("hardware.scale_up.efficiency", up.has_efficiency(), up.efficiency());
  check.positive_if_set("hardware.scale_up.domain_size", up.has_domain_size(), up.domain_size());

  const config::ScaleOut& out = hw.scale_out();
  if (hw.nodes() > 1) {
    check.positive("hardware.scale_out.nic_bits_per_s", out.has_nic_bits_per_s(),
                   out.nic_bits_per_s());
  }
  check.positive_if_set("hardware.scale_out.nics_per_gpu", out.has_nics_per_gpu(),
                        out.nics_per_gpu());
  check.latency("hardware.scale_out.nic_latency_s", out.nic_latency_s());
  check.latency("hardware.scale_out.switch_latency_s", out.switch_latency_s());
  check.efficiency("hardware.scale_out.efficiency", out.has_efficiency(), out.efficiency());
  check.positive_if_set("hardware.scale_out.nodes_per_leaf", out.has_nodes_per_leaf(),
                        out.nodes_per_leaf());
  check.positive_if_set("hardware.scale_out.spines", out.has_spines(), out.spines());
  check.positive_if_set("hardware.scale_out.oversubscription", out.has_oversubscription(),
                        out.oversubscription());

  const config::Pcie& pcie = hw.pcie();
  check.positive("hardware.pcie.bytes_per_s", pcie.has_bytes_per_s(), pcie.bytes_per_s());
  check.latency("hardware.pcie.latency_s", pcie.latency_s());
  check.efficiency("hardware.pcie.efficiency", pcie.has_efficiency(), pcie.efficiency());

  check_compute(hw, check);
  check.latency("hardware.collectives.base_latency_s", hw.collectives().base_latency_s());
  check.latency("hardware.collectives.host_skew_s", hw.collectives().host_skew_s());
  check_scale_up_shape(hw, check);
  check_host(hw, check);
  check.latency("hardware.scale_out.step_overhead_s", hw.scale_out().step_overhead_s());
  check_fabric_tiers(hw, check);
  check_nic_ports(hw, check);
}

void validate_hardware(const config::Hardware& hardware, const SourceMap& sources) {
  check_field_limits(hardware, "hardware", sources);
  check_hardware(hardware, Checker(sources));
  validate_power_cost(hardware, sources);
}

}  // namespace racksim::config
