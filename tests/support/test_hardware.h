// DGX-H100-like hardware spelled out for tests, so that topology tests do not depend on the
// presets: 450 GB/s NVLink at 0.8 efficiency, 400 Gb/s NICs at 0.9, 32 servers per leaf,
// 8 spines; 2 sockets with 2 PCIe switches each (2 GPUs and 2 NICs per switch), PCIe links of
// 0.75 us (GPU -> switch -> NIC: 1.5 us).
#pragma once

#include <string>

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "proto/scenario.pb.h"

namespace racksim::testing {

inline constexpr char kTestHardware[] = R"pb(
  gpus_per_node: 8
  scale_up { bytes_per_s: 450e9 latency_s: 2e-6 efficiency: 0.8 domain_size: 8 }
  scale_out {
    nic_bits_per_s: 400e9
    nics_per_gpu: 1
    nic_latency_s: 1e-6
    switch_latency_s: 0.5e-6
    efficiency: 0.9
    nodes_per_leaf: 32
    spines: 8
    oversubscription: 1
  }
  pcie { generation: 5 bytes_per_s: 64e9 latency_s: 0.75e-6 efficiency: 0.85 }
  host {
    sockets: 2
    pcie_switches_per_socket: 2
    inter_socket_bytes_per_s: 100e9
    inter_socket_latency_s: 0.25e-6
  }
)pb";

inline constexpr double kTestNvlink = 450e9 * 0.8;
inline constexpr double kTestNic = 400e9 / 8 * 0.9;
inline constexpr double kTestPcie = 64e9 * 0.85;
inline constexpr double kTestInterSocket = 100e9 * 0.85;

// The test hardware with `nodes` servers and `extra` text-format fields merged on top.
inline config::Hardware test_hardware(int nodes, const std::string& extra = "") {
  config::Hardware hw;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(kTestHardware, &hw));
  hw.set_nodes(nodes);
  if (!extra.empty()) {
    EXPECT_TRUE(google::protobuf::TextFormat::MergeFromString(extra, &hw));
  }
  return hw;
}

}  // namespace racksim::testing
