// Power, price and reliability figures as protobuf text format, like hardware_presets.cpp.
//
// How the GPU's three states are set (no vendor publishes per-state power):
//   busy  = the board power limit (TDP/TGP of the datasheet): large GEMMs run at the limit;
//   comm  = 45 % of it: NCCL kernels use a few SMs but keep HBM, NVLink and clocks up;
//   idle  = 20 % of it: a GPU waiting inside a step (bubble, a late peer) keeps its clocks,
//           well above the ~10 % of a GPU idle at the desktop.
// The node's other parts (node_other_w: DRAM, SSDs, fans, power conversion) are set so that a
// fully busy DGX H100 draws the 8.4 kW Latif et al. measured during LLM training ("Empirical
// Measurements of AI Training Power Demand on a GPU-Accelerated Node", arXiv 2412.08602,
// 2024; rated 10.2 kW): 8 x 700 + 2 x 350 (CPUs) + 4 x 100 (NVSwitch) + 8 x 25 (NICs) + 1500
// = 8400 W; other systems keep that 15 % of their rated system power.
// Estimates are marked [EST]; calibrate them against DCGM or a power meter.
#include "topologies/power_presets.h"

#include <array>

namespace racksim::topo {
namespace {

constexpr std::string_view kDefaults = R"pb(
  power {
    # [EST] Between hyperscale liquid-cooled halls (Google's fleet: 1.10 in 2023) and the
    # industry average of the Uptime Institute's 2023 survey (1.58).
    pue: 1.2
  }
  cost {
    basis: RENTAL
    # [EST] A typical write-off period for servers (4-6 years).
    lifetime_years: 5
    # [EST] US industrial electricity, ~0.08 $/kWh (EIA Electric Power Monthly, 2024 average).
    electricity_price_per_kwh: 0.08
  }
  reliability {
    source: "Llama 3 paper (Dubey et al., 'The Llama 3 Herd of Models', arXiv 2407.21783, Table 5): 419 unexpected interruptions in 54 days on 16,384 H100 in 2,048 nodes (21.23 M GPU-hours); Tectonic storage 2 TB/s sustained"
    # GPU 148 + HBM3 72 + SRAM 19 + GPU system processor 17 + silent data corruption 6 +
    # thermal interface/sensor 6 = 268 per 21,233,664 GPU-hours.
    gpu_failures_per_hour: 1.2622e-5
    # Host maintenance 32 + NIC 7 + SSD 3 + power supply 3 + chassis 2 + IO board 2 + CPU 2 +
    # system memory 2 = 53 per 2,654,208 node-hours.
    node_failures_per_hour: 1.9968e-5
    # Network switch/cable 35 per 21,233,664 GPU-hours.
    network_failures_per_hour: 1.6483e-6
    # Software bug 54 + dependency 2 + NCCL watchdog timeouts 7 = 63 per 21,233,664 GPU-hours.
    software_failures_per_hour: 2.9670e-6
    # Llama 3: Tectonic sustains 2 TB/s (7 TB/s peak) for the whole 16K-GPU cluster.
    storage_write_bytes_per_s: 2e12
    # [EST] One 200 Gb/s storage NIC's worth per node.
    node_storage_bytes_per_s: 25e9
    # [EST] Detect, drain, reschedule and re-initialize NCCL: ten minutes (Llama 3 reports the
    # effort to cut it, not the figure).
    restart_s: 600
  }
)pb";

// 8-GPU HGX/DGX boards. NVSwitch chips per board: 6 (A100, NVSwitch 2), 4 (H100/H200,
// NVSwitch 3), 2 (B200/B300, NVSwitch 4). [EST] chip power and NIC power. switch_w is a switch
// of scale_out.switch_radix ports (64 when unset), ~16 W per NDR port (QM9700 class) and ~25 W
// per XDR port, optics included [EST]; the energy ledger charges the ports the cluster uses.
constexpr std::string_view kDgxA100 = R"pb(
  power {
    source: "A100 SXM4 400 W (NVIDIA A100 datasheet); DGX A100 6.5 kW max (DGX A100 user guide); 2 x EPYC 7742 225 W TDP; comm/idle shares, NVSwitch, NIC, switch and node_other [EST] (power_presets.cpp)"
    gpu_busy_w: 400
    gpu_comm_w: 180
    gpu_idle_w: 80
    cpu_w: 225
    nvswitch_w: 40
    nvswitch_chips_per_node: 6
    nic_w: 20
    switch_w: 600
    node_other_w: 1000
  }
  cost {
    source: "[EST] 2025 on-demand cloud list prices and DGX list prices plus a network share"
    gpu_hour_price: 1.8
    system_price_per_gpu: 25000
  }
)pb";

constexpr std::string_view kDgxH100 = R"pb(
  power {
    source: "H100 SXM5 700 W (NVIDIA H100 datasheet); DGX H100 10.2 kW rated, 8.4 kW measured max in LLM training (Latif et al. 2024, arXiv 2412.08602); 2 x Xeon 8480C 350 W TDP; comm/idle shares, NVSwitch, NIC, switch [EST] (power_presets.cpp)"
    gpu_busy_w: 700
    gpu_comm_w: 315
    gpu_idle_w: 140
    cpu_w: 350
    nvswitch_w: 100
    nvswitch_chips_per_node: 4
    nic_w: 25
    switch_w: 1000
    node_other_w: 1500
  }
  cost {
    source: "[EST] 2025 on-demand cloud list prices and DGX list prices plus a network share"
    gpu_hour_price: 3.0
    system_price_per_gpu: 45000
  }
)pb";

constexpr std::string_view kDgxH200 = R"pb(
  power {
    source: "H200 SXM up to 700 W (NVIDIA H200 datasheet); DGX H200 10.2 kW rated; host as DGX H100; comm/idle shares, NVSwitch, NIC, switch [EST] (power_presets.cpp)"
    gpu_busy_w: 700
    gpu_comm_w: 315
    gpu_idle_w: 140
    cpu_w: 350
    nvswitch_w: 100
    nvswitch_chips_per_node: 4
    nic_w: 25
    switch_w: 1000
    node_other_w: 1500
  }
  cost {
    source: "[EST] 2025 on-demand cloud list prices and DGX list prices plus a network share"
    gpu_hour_price: 3.8
    system_price_per_gpu: 50000
  }
)pb";

constexpr std::string_view kHgxB200 = R"pb(
  power {
    source: "B200 HGX configurable to 1 kW per GPU; DGX B200 14.3 kW max (NVIDIA DGX B200 user guide); 2 x Xeon 8570 350 W TDP; comm/idle shares, NVSwitch, NIC, switch [EST] (power_presets.cpp)"
    gpu_busy_w: 1000
    gpu_comm_w: 450
    gpu_idle_w: 200
    cpu_w: 350
    nvswitch_w: 150
    nvswitch_chips_per_node: 2
    nic_w: 25
    switch_w: 1000
    node_other_w: 2150
  }
  cost {
    source: "[EST] 2025 on-demand cloud list prices and DGX list prices plus a network share"
    gpu_hour_price: 5.0
    system_price_per_gpu: 60000
  }
)pb";

constexpr std::string_view kHgxB300 = R"pb(
  power {
    source: "B300 HGX 1100 W per GPU [MED]; DGX B300 14.5 kW (NVIDIA DGX B300 documentation); 2 x Xeon 6776P 350 W TDP; CX-8 800G; comm/idle shares, NVSwitch, NIC, switch [EST] (power_presets.cpp)"
    gpu_busy_w: 1100
    gpu_comm_w: 495
    gpu_idle_w: 220
    cpu_w: 350
    nvswitch_w: 150
    nvswitch_chips_per_node: 2
    nic_w: 35
    switch_w: 1600
    node_other_w: 2200
  }
  cost {
    source: "[EST] 2025 on-demand cloud list prices and DGX list prices plus a network share"
    gpu_hour_price: 6.0
    system_price_per_gpu: 70000
  }
)pb";

// NVL72 trays: 4 GPUs and 2 Grace; the rack's 18 NVLink switch chips (9 switch trays) are one
// per compute tray.
constexpr std::string_view kGb200Nvl72 = R"pb(
  power {
    source: "GB200 superchip up to 2.7 kW = 2 x 1200 W B200 + Grace (NVIDIA GB200 NVL72 page, ~120 kW per rack); Grace with LPDDR5X ~300 W; comm/idle shares, NVLink switch chip, NIC, switch, tray other [EST] (power_presets.cpp)"
    gpu_busy_w: 1200
    gpu_comm_w: 540
    gpu_idle_w: 240
    cpu_w: 300
    nvswitch_w: 250
    nvswitch_chips_per_node: 1
    nic_w: 25
    switch_w: 1000
    node_other_w: 1000
  }
  cost {
    source: "[EST] 2025 cloud list prices; ~3 M$ per NVL72 rack plus a network share"
    gpu_hour_price: 6.0
    system_price_per_gpu: 50000
  }
)pb";

constexpr std::string_view kGb300Nvl72 = R"pb(
  power {
    source: "GB300: 1400 W per B300 GPU [MED] (NVIDIA GB300 NVL72 page, ~135 kW per rack); Grace ~300 W; CX-8 800G; comm/idle shares, NVLink switch chip, NIC, switch, tray other [EST] (power_presets.cpp)"
    gpu_busy_w: 1400
    gpu_comm_w: 630
    gpu_idle_w: 280
    cpu_w: 300
    nvswitch_w: 250
    nvswitch_chips_per_node: 1
    nic_w: 35
    switch_w: 1600
    node_other_w: 1000
  }
  cost {
    source: "[EST] 2025 cloud list prices; ~4 M$ per NVL72 rack plus a network share"
    gpu_hour_price: 7.0
    system_price_per_gpu: 55000
  }
)pb";

constexpr std::string_view kMi300x = R"pb(
  power {
    source: "MI300X 750 W (AMD Instinct MI300X datasheet); xGMI mesh, no switch chip; 2 x EPYC 9654 360 W TDP; comm/idle shares, NIC, switch, node_other [EST] (power_presets.cpp)"
    gpu_busy_w: 750
    gpu_comm_w: 340
    gpu_idle_w: 150
    cpu_w: 360
    nvswitch_w: 0
    nvswitch_chips_per_node: 0
    nic_w: 25
    switch_w: 1000
    node_other_w: 1500
  }
  cost {
    source: "[EST] 2025 on-demand cloud list prices; server list price plus a network share"
    gpu_hour_price: 2.5
    system_price_per_gpu: 30000
  }
)pb";

struct Figures {
  std::string_view preset;
  std::string_view text;
};

// H800 and the seed's mixed-NIC B300 nodes draw what their GPU's board does.
constexpr std::array<Figures, 11> kFigures = {{
    {"dgx-a100", kDgxA100},
    {"a100-vtrain-cluster", kDgxA100},
    {"dgx-h100", kDgxH100},
    {"dgx-h200", kDgxH200},
    {"hgx-h800", kDgxH100},
    {"hgx-b200", kHgxB200},
    {"hgx-b300", kHgxB300},
    {"hgx-b300-mixed-nics", kHgxB300},
    {"gb200-nvl72", kGb200Nvl72},
    {"gb300-nvl72", kGb300Nvl72},
    {"mi300x", kMi300x},
}};

}  // namespace

std::string_view power_cost_defaults_text() {
  return kDefaults;
}

std::optional<std::string_view> power_cost_preset_text(std::string_view preset) {
  for (const Figures& f : kFigures) {
    if (f.preset == preset) return f.text;
  }
  return std::nullopt;
}

}  // namespace racksim::topo
