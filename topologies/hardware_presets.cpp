// Hardware presets as protobuf text format, so that a preset reads like the scenario section a
// user would write. Every figure comes from data/hardware.csv (8-GPU servers,
// dense BF16, bandwidth per direction); the defaults come from docs/sources.md §4-5 and
// docs/sources.md §7.
#include "topologies/hardware_presets.h"

#include "topologies/power_presets.h"

#include <google/protobuf/text_format.h>

#include <array>
#include <stdexcept>

#include <fmt/format.h>

namespace racksim::topo {
namespace {

// What every hardware section starts from: the parts that are not a property of one GPU model.
constexpr std::string_view kDefaults = R"pb(
  gpus_per_node: 8
  nodes: 1
  scale_up {
    # One GPU -> NVSwitch -> GPU hop. docs/sources.md §4: NVLink alpha ~1-2 us per step
    # (NCCL's model: 0.6-3.4 us per NVLink hop depending on the protocol).
    latency_s: 1.5e-6
    # NCCL's topology model: 18 links x 20.6 GB/s = 371 of 450 GB/s on H100
    # (docs/sources.md §7; measured ring busbw ~370 GB/s).
    efficiency: 0.82
    # Eight GPUs behind the NVSwitches of one HGX board (data/hardware.csv scaleup_domain).
    domain_size: 8
    # NVLS all-reduce on DGX H100 measured ~480 GB/s busbw (algbw ~275 GB/s) for >= 256 MB
    # (docs/sources.md §7). Each port carries (n+1)/n x the buffer, so busbw =
    # 2(n-1)/(n+1) x port rate: 480 x 9/14 = 309 GB/s per port = 0.686 of 450.
    nvls_efficiency: 0.686
  }
  scale_out {
    # One NIC per GPU on every 8-GPU server in data/hardware.csv (nics_per_gpu).
    nics_per_gpu: 1
    # NIC TX/RX 0.3-0.8 us plus the HDR/NDR port ~0.6 us (docs/sources.md §4).
    nic_latency_s: 1.5e-6
    # leaf -> spine -> leaf adds ~1 us, i.e. ~0.5 us per link (docs/sources.md §4).
    switch_latency_s: 0.5e-6
    # NDR 400G reaches 46 of 50 GB/s in nccl-tests (docs/sources.md §7).
    efficiency: 0.92
    # DGX SuperPOD scalable unit: 32 nodes, one leaf per rail, 4 spines, non-blocking
    # (docs/sources.md §5).
    nodes_per_leaf: 32
    spines: 4
    oversubscription: 1
    tiers: 2
    link_layer: INFINIBAND
    # RoCE on Ethernet ports: an estimate a little below InfiniBand's 0.92 (DeepSeek's
    # ISCA'25 latency table puts RoCE behind IB; no bandwidth figure in the reference).
    ethernet_efficiency: 0.85
  }
  node_kind: HGX
  host {
    # DGX H100 / typical HGX: 2 sockets, 2 PCIe switches per socket, each with 2 GPUs and
    # 2 NICs (docs/sources.md §3).
    sockets: 2
    pcie_switches_per_socket: 2
    # Not in the reference: an estimate for 4 UPI 2.0 links at 16 GT/s (~32 GB/s each way
    # per link) on Sapphire Rapids.
    inter_socket_bytes_per_s: 128e9
    inter_socket_latency_s: 0.3e-6
    # Not in the reference: the CPU optimizer (DeepSpeed's CPU Adam class of kernels) is
    # memory-bound at ~16 B read + 14 B written per parameter; an eighth of a 2-socket host's
    # DDR5 bandwidth (~2 x 300 GB/s) per GPU gives about 2.5e9 parameters/s, rounded down.
    cpu_optimizer_params_per_s: 2e9
  }
  pcie {
    # A PCIe switch hop costs a few hundred ns; an estimate, not a measurement.
    latency_s: 0.5e-6
    # TLP/DLLP overhead. Conservative: a Gen5 x16 link moved ~58 of 63 GB/s
    # (docs/sources.md §6 item 3).
    efficiency: 0.85
  }
  compute {
    # Fractions of the peak reached by Megatron-style kernels; starting points to calibrate
    # against vTrain's A100 measurements (docs/sources.md §9), not measurements themselves.
    gemm: 0.75
    attention: 0.60
    elementwise: 0.90
    hbm: 0.85
    launch_overhead_s: 2e-6
  }
  collectives {
    # NCCL's base latency per call: 6.6 us (ring LL) to 8.4 us (simple)
    # (docs/sources.md §7, NCCL tuning.cc).
    base_latency_s: 6e-6
    algorithm: AUTO
    # NCCL enables PXN by default; racksim leaves it off unless asked, so that the default
    # rings' routes stay the plain rail routes.
    pxn: false
  }
)pb";

constexpr std::string_view kDgxA100 = R"pb(
  source: "data/hardware.csv A100-80GB-SXM4: NVIDIA A100 datasheet (via glennklockwood.com/garden/processors/A100); DGX A100 = 8x ConnectX-6 HDR 200G (1 per GPU) [HIGH]; no FP8 support"
  gpu {
    name: "A100-80GB-SXM4"
    bf16_flops_per_s: 312e12
    # No FP8 on Ampere: fp8_flops_per_s stays unset (0).
    fp32_flops_per_s: 19.5e12
    hbm_bytes: 85899345920  # the driver's total, 81,920 MiB (data/hbm-capacity.csv)
    hbm_bytes_per_s: 2.039e12
    sm_count: 108
  }
  # The kernel compute model (sim/gemm_model.h): GEMMs from their shapes over the SMs, at
  # the Maximum Achievable Matmul FLOPS of an A100 SXM in BF16, 267.9 of 312 TFLOP/s
  # (stas00/ml-engineering, compute/accelerator/README.md, MAMF table, CUDA 12.1), a burst rate
  # as the same table's H100 figure is (data/measured/h200-kernels/). Through a step every
  # FLOP-bound kernel runs at the held share the GH100 was measured at (kGh100HeldRate below),
  # borrowed because no A100 was measured. Two A100 figures agree with its size without setting
  # it: an 8192-cube BF16 GEMM at 257 TFLOP/s on random inputs and 295 on zeros, which draw less
  # power (H. He, "Strangely, Matrix Multiplications on GPUs Run Faster When Given 'Predictable'
  # Data!", 2024: 0.871), and the ceiling racksim calibrate fits on vTrain's A100 rows for a GEMM
  # that fills the GPU, 0.934 of MAMF's rate (scenarios/calibration/
  # a100-kernel-calibration.textproto; 0.912 in a100-vtrain-cluster).
  compute { model: KERNEL gemm: 0.859 gemm_k_overhead: 64 cpu_launch_floor_s: 4e-6 }
  scale_up { bytes_per_s: 300e9 domain_size: 8 }
  scale_out { nic_bits_per_s: 200e9 nics_per_gpu: 1 }
  pcie { generation: 4 bytes_per_s: 31.5e9 }
  # 2 EPYC 7742 sockets, 4 PCIe Gen4 switches (2 per socket), each with 2 GPUs and 2 CX-6;
  # 1 TB of memory in the base configuration (docs/sources.md §3).
  host { memory_bytes: 0.5e12 }
)pb";

// The kernel compute model (sim/gemm_model.h) of every GH100 GPU (H100, H200, H800: the same
// 132 SMs): GEMMs from their shapes over the SMs.
// - BF16 at the H100 SXM's Maximum Achievable Matmul FLOPS, 792.1 of 989 TFLOP/s
//   (stas00/ml-engineering, compute/accelerator/README.md, MAMF table, CUDA 12.1; the 900 W GH200
//   reaches 0.83). The 64 K elements per tile are an estimate.
// - FP8 at 0.74 of the FP8 peak and 704 K elements per tile: the tile model fitted to the ten
//   large FP8 shapes DeepGEMM measured on an H800 (github.com/deepseek-ai/DeepGEMM, README, 2025,
//   MIT; blockwise scaling; all ten within 3 %): data/measured/deepgemm-h800-fp8-gemm.csv,
//   tests/sim/sim_gemm_grid_test.cpp.
// - Both rates are burst rates; through a step every FLOP-bound kernel runs at the held share
//   of them (kGh100HeldRate below).
// - FP8 training's cast kernels at 0.389 of the HBM bandwidth, the rate Transformer Engine's
//   cast-transpose reached on an H100 SXM for a 4,096 x 4,096 FP16 tensor (51.5 us for 67 MB read
//   and written; NVIDIA/TransformerEngine pull request #101, 2023, Apache-2.0; its 3,072 x 3,072
//   figure, 0.460, fits in the 50 MB L2 and is left aside), not a copy's rate.
constexpr std::string_view kHopperCompute = R"pb(
  compute {
    model: KERNEL
    gemm: 0.801
    gemm_k_overhead: 64
    cpu_launch_floor_s: 4e-6
    gemm_fp8: 0.74
    gemm_fp8_k_overhead: 704
    fp8_cast: 0.389
  }
)pb";

// The throughput a GPU holds through a training step at its power limit, over its benchmarks'
// burst rates. The benchmarks behind the presets' kernel rates time a kernel for milliseconds,
// before a 700 W GH100 reaches its power limit; a training step keeps every SM busy for seconds
// and the clocks fall. Measured on one H200 SXM at 700 W (data/measured/h200-kernels/
// sustained-fine/, scripts/device/sustained-clock.py): an 8,192-cube FP8 GEMM keeps 0.862 of its
// burst throughput once the limit holds (BF16 0.842). Every FLOP-bound kernel runs at that share
// (sustained_clock_ratio; HBM-bound kernels keep the bandwidth). The H100 and H800 are the same
// die at the same limit with HBM that draws less, so they may hold slightly more; dgx-a100 and
// the Blackwell presets borrow it, none of those GPUs having been measured held.
// `--set hardware.compute.sustained_clock_ratio=1` gives the burst rates.
constexpr std::string_view kGh100HeldRate = R"pb(
  compute { sustained_clock_ratio: 0.862 }
)pb";

// The kernel compute model of every Blackwell GPU (B200, GB200's B200; B300 and GB300's
// Blackwell Ultra borrow it): GEMMs from their shapes over the SMs, with the tile model's terms
// fitted to the sm_100 rows of the GEMM table XLA's GPU cost model carries as measured data
// (OpenXLA, Apache-2.0; data/measured/xla-gemm-grid.csv, tests/sim/sim_xla_gemm_grid_test.cpp):
// the shapes that take 20 us or more, with a fixed time per kernel fitted beside the two terms
// because each figure holds one (4-6 us). The same fit to the table's sm_90 BF16 rows gives 0.880
// and 144 elements per tile, against 0.850 and 160 fitted to this project's own H200 at burst:
// the table times burst rates, as those benchmarks do.
// - BF16 at 0.760 of the peak, 256 K elements per tile; FP8 (E4M3 operands) at 0.885, 464 K.
// - The table does not say which sm_100 part (B200 at 1,000 W or GB200's at 1,200 W) or which
//   library it timed; each preset takes the fractions of its own datasheet peak. Blackwell Ultra
//   (sm_103; 160 SMs) is not in the table and borrows the fractions.
// - The host's floor per kernel and the FP8 casts' rate are the Hopper presets' (kHopperCompute),
//   no Blackwell figure being public; through a step FLOP-bound kernels run at the GH100's held
//   share (kGh100HeldRate), borrowed as dgx-a100 borrows it: no Blackwell GPU was measured held.
constexpr std::string_view kBlackwellCompute = R"pb(
  compute {
    model: KERNEL
    gemm: 0.76
    gemm_k_overhead: 256
    gemm_fp8: 0.885
    gemm_fp8_k_overhead: 464
    cpu_launch_floor_s: 4e-6
    fp8_cast: 0.389
  }
)pb";

// The fused attention's share of the BF16 peak on a Blackwell die, forward and backward together
// (3.5 forward FLOPs over the two kernels' time), as NVIDIA's cuDNN 9.26 training benchmark
// timed it on one GB200 and one GB300 (data/measured/cudnn-sdpa-gb200-gb300.csv: Llama 3.1's
// causal GQA, head dimension 128): the mean over 4K, 8K and 16K tokens, as the H200's cuDNN
// attention was read (tests/sim/sim_blackwell_attention_test.cpp). The benchmark's ten
// iterations a shape run at burst clocks; through a step the held share applies (kGh100HeldRate).
// Blackwell Ultra doubles the exponential units the attention's softmax needs (NVIDIA developer
// blog, "Inside NVIDIA Blackwell Ultra", 2025): its attention reaches 1.13 times the B200 die's
// share. DGX B200 and B300 are the same two dies at lower power limits and borrow these shares.
// Before, every Blackwell preset borrowed the Hopper presets' 0.60 (FlashAttention-3's forward).
constexpr std::string_view kBlackwellAttention = R"pb(
  compute { attention: 0.54 }
)pb";
constexpr std::string_view kBlackwellUltraAttention = R"pb(
  compute { attention: 0.61 }
)pb";

constexpr std::string_view kDgxH100 = R"pb(
  source: "data/hardware.csv H100-SXM5: NVIDIA H100 page (1979/3958 sparse, halved); NVLink4 900 GB/s bidir; DGX H100 user guide 8x CX-7 400G [HIGH]"
  gpu {
    name: "H100-SXM5"
    bf16_flops_per_s: 989e12
    fp8_flops_per_s: 1979e12
    fp32_flops_per_s: 67e12
    hbm_bytes: 85520809984  # the driver's total, 81,559 MiB (data/hbm-capacity.csv)
    hbm_bytes_per_s: 3.35e12
    sm_count: 132
  }
  # compute: kHopperCompute and kGh100HeldRate (added to every GH100 preset).
  # NVSwitch 3 reduces in-network (NVLink SHARP).
  scale_up { bytes_per_s: 450e9 domain_size: 8 nvls: true }
  scale_out { nic_bits_per_s: 400e9 nics_per_gpu: 1 }
  pcie { generation: 5 bytes_per_s: 63e9 }
  # 2 TB DDR5 over 2 sockets (docs/sources.md §3, BasePOD).
  host { memory_bytes: 1e12 }
)pb";

constexpr std::string_view kDgxH200 = R"pb(
  source: "data/hardware.csv H200-SXM: NVIDIA H200 spec (same GH100 compute as H100); MLCommons NVIDIA H200-SXM-141GB system JSON (18x NVLink4 900 GB/s, PCIe Gen5 x16); DGX H200 = DGX H100 networking [HIGH]"
  gpu {
    name: "H200-SXM"
    bf16_flops_per_s: 989e12
    fp8_flops_per_s: 1979e12
    fp32_flops_per_s: 67e12
    hbm_bytes: 150754820096  # the driver's total, 143,771 MiB (data/hbm-capacity.csv)
    hbm_bytes_per_s: 4.8e12
    sm_count: 132
  }
  # compute: kHopperCompute (the H100's GH100 SMs).
  scale_up { bytes_per_s: 450e9 domain_size: 8 nvls: true }
  scale_out { nic_bits_per_s: 400e9 nics_per_gpu: 1 }
  pcie { generation: 5 bytes_per_s: 63e9 }
  # DGX H200 = DGX H100 host: 2 TB DDR5 over 2 sockets.
  host { memory_bytes: 1e12 }
)pb";

constexpr std::string_view kHgxH800 = R"pb(
  source: "data/hardware.csv H800-SXM5: DeepSeek ISCA'25 arXiv 2505.09343 (NVLink 900->400 GB/s bidir; 8x400G IB CX7 per node); DeepSeek-V3 report measured NVLink 160 GB/s vs IB 50 GB/s; compute = H100 SXM [HIGH bw / MED compute]"
  gpu {
    name: "H800-SXM5"
    bf16_flops_per_s: 989e12
    fp8_flops_per_s: 1979e12
    fp32_flops_per_s: 67e12
    hbm_bytes: 85520809984  # the driver's total, 81,559 MiB (data/hbm-capacity.csv)
    hbm_bytes_per_s: 3.35e12
    sm_count: 132
  }
  # compute: kHopperCompute (the H100's GH100 SMs).
  # The export-limited NVLink: 200 GB/s per direction by spec, 160 measured by DeepSeek.
  scale_up { bytes_per_s: 200e9 domain_size: 8 nvls: true }
  scale_out { nic_bits_per_s: 400e9 nics_per_gpu: 1 }
  pcie { generation: 5 bytes_per_s: 63e9 }
)pb";

constexpr std::string_view kHgxB200 = R"pb(
  source: "data/hardware.csv B200-HGX: NVIDIA HGX/DGX B200 spec (FP16/BF16 36 PF sparse per 8 GPU, 1440 GB total, 64 TB/s); DGX B200: 8x CX-7 400G; MLCommons Nebius B200 JSON (PCIe Gen5 x16) [HIGH]; 192 GB physical/announced"
  gpu {
    name: "B200-HGX"
    bf16_flops_per_s: 2250e12
    fp8_flops_per_s: 4500e12
    fp32_flops_per_s: 75e12
    hbm_bytes: 192265846784  # the driver's total, 183,359 MiB (data/hbm-capacity.csv)
    hbm_bytes_per_s: 8.0e12
    # 148 SMs, 74 of each die's 80 (Chips and Cheese, "Nvidia's B200: Keeping the CUDA
    # Juggernaut Rolling", 2025).
    sm_count: 148
  }
  scale_up { bytes_per_s: 900e9 domain_size: 8 nvls: true }
  scale_out { nic_bits_per_s: 400e9 nics_per_gpu: 1 }
  # Blackwell lists Gen6, but DGX/HGX B200 hosts are Gen5 x16 (docs/sources.md §6 item 3).
  pcie { generation: 5 bytes_per_s: 63e9 }
)pb";

constexpr std::string_view kHgxB300 = R"pb(
  source: "data/hardware.csv B300-HGX: NVIDIA HGX/DGX B300 spec (FP16/BF16 36 PF sparse per 8 GPU; up to 2.3 TB); DGX B300: 8x CX-8 800G; nvidia-smi shows 275040 MiB (=288.4 GB, source of '~275'); FP4 dense ~13.1-13.5 PF [HIGH bf16/mem, MED fp4]"
  gpu {
    name: "B300-HGX"
    bf16_flops_per_s: 2250e12
    fp8_flops_per_s: 4500e12
    # Blackwell Ultra cuts FP64 (to ~1.25 TF), not FP32.
    fp32_flops_per_s: 75e12
    hbm_bytes: 288400343040  # the driver's total, 275,040 MiB (data/hbm-capacity.csv)
    hbm_bytes_per_s: 8.0e12
    # 160 SMs (NVIDIA developer blog, "Inside NVIDIA Blackwell Ultra", August 2025).
    sm_count: 160
  }
  scale_up { bytes_per_s: 900e9 domain_size: 8 nvls: true }
  scale_out { nic_bits_per_s: 800e9 nics_per_gpu: 1 }
  # Gen6 x16 by spec; measured ~58 GB/s on a Gen5 host (docs/sources.md §6 item 3).
  pcie { generation: 6 bytes_per_s: 121e9 }
  # DGX B300: each CX-8 carries its own PCIe Gen6 switch shared by one GPU and its NIC
  # (docs/sources.md §3): 4 switches per socket, each with 1 GPU and 1 NIC.
  host { pcie_switches_per_socket: 4 }
)pb";

// The seed cluster (docs/seed-case.md): 4 B300 nodes, InfiniBand 400 Gb/s per port, GPUs
// on two NUMA domains, and a few ports that are Ethernet. Which ports and at what rate is not
// in the seed: here ports 3 and 7 (one per socket) are 100 GbE RoCE on a separate Ethernet
// network, an assumption to override with scale_out.ports.
constexpr std::string_view kHgxB300MixedNics = R"pb(
  source: "docs/seed-case.md (4 x 8 B300, IB 400 Gb/s per port, mixed IB/Ethernet link layers, two NUMA domains); GPU figures as hgx-b300; Ethernet ports 3 and 7 at 100 GbE are an assumption"
  nodes: 4
  gpu {
    name: "B300-HGX"
    bf16_flops_per_s: 2250e12
    fp8_flops_per_s: 4500e12
    fp32_flops_per_s: 75e12
    hbm_bytes: 288400343040  # the driver's total, 275,040 MiB (data/hbm-capacity.csv)
    hbm_bytes_per_s: 8.0e12
    # 160 SMs (NVIDIA developer blog, "Inside NVIDIA Blackwell Ultra", August 2025).
    sm_count: 160
  }
  scale_up { bytes_per_s: 900e9 domain_size: 8 nvls: true }
  scale_out {
    nic_bits_per_s: 400e9
    nics_per_gpu: 1
    ports { index: 3 link_layer: ETHERNET bits_per_s: 100e9 }
    ports { index: 7 link_layer: ETHERNET bits_per_s: 100e9 }
  }
  pcie { generation: 6 bytes_per_s: 121e9 }
  host { pcie_switches_per_socket: 2 }
)pb";

// GB200 NVL72: a rack of 18 compute trays (4 B200 + 2 Grace each) and 9 NVLink switch trays;
// the 72 GPUs form one NVLink domain. A node is one tray.
constexpr std::string_view kGb200Nvl72 = R"pb(
  source: "data/hardware.csv GB200-NVL72: NVIDIA GB200 NVL72 page (FP16/BF16 360 PF sparse/72 GPUs; 13.4 TB HBM3e, 576 TB/s; NVLink 130 TB/s); DGX GB200 user guide: 4x CX-7 400G per 4-GPU tray [HIGH]; GPU-CPU via NVLink-C2C 900 GB/s bidir; tray layout docs/sources.md §3"
  node_kind: NVL_TRAY
  nodes: 18
  gpus_per_node: 4
  gpu {
    name: "B200-GB200"
    bf16_flops_per_s: 2500e12
    fp8_flops_per_s: 5000e12
    fp32_flops_per_s: 80e12
    hbm_bytes: 198674743296  # the driver's total, 189,471 MiB (data/hbm-capacity.csv)
    hbm_bytes_per_s: 8.0e12
    # 148 SMs, 74 of each die's 80 (Chips and Cheese, "Nvidia's B200: Keeping the CUDA
    # Juggernaut Rolling", 2025).
    sm_count: 148
  }
  scale_up { bytes_per_s: 900e9 domain_size: 72 nvls: true }
  scale_out { nic_bits_per_s: 400e9 nics_per_gpu: 1 }
  pcie { generation: 5 bytes_per_s: 63e9 }
  # Each Grace drives 2 GPUs over NVLink-C2C, 450 GB/s per direction (measured ~360-377 one
  # way); up to 480 GB LPDDR5X per Grace. No Grace <-> Grace figure in the reference: the
  # default inter-socket estimate applies.
  host { sockets: 2 c2c_bytes_per_s: 450e9 c2c_latency_s: 0.5e-6 memory_bytes: 480e9 }
)pb";

constexpr std::string_view kGb300Nvl72 = R"pb(
  source: "data/hardware.csv GB300-NVL72: NVIDIA GB300 NVL72 page (FP16/BF16 360 PF sparse; 20 TB HBM, 576 TB/s; NVLink 130 TB/s; 72x CX-8 800G) [HIGH]; one board per tray with 2 Grace + 4 B300 + 4 CX-8 (docs/sources.md §3)"
  node_kind: NVL_TRAY
  nodes: 18
  gpus_per_node: 4
  gpu {
    name: "B300-GB300"
    bf16_flops_per_s: 2500e12
    fp8_flops_per_s: 5000e12
    fp32_flops_per_s: 80e12
    hbm_bytes: 298500227072  # 278 GiB as PyTorch sees it (data/hbm-capacity.csv)
    hbm_bytes_per_s: 8.0e12
    # 160 SMs (NVIDIA developer blog, "Inside NVIDIA Blackwell Ultra", August 2025).
    sm_count: 160
  }
  scale_up { bytes_per_s: 900e9 domain_size: 72 nvls: true }
  scale_out { nic_bits_per_s: 800e9 nics_per_gpu: 1 }
  # CX-8 is a PCIe Gen6 device (data/hardware.csv pcie_gen 6); a Gen5 x16 link could not carry 800G.
  pcie { generation: 6 bytes_per_s: 121e9 }
  host { sockets: 2 c2c_bytes_per_s: 450e9 c2c_latency_s: 0.5e-6 memory_bytes: 480e9 }
)pb";

// AMD MI300X: 8 OAM GPUs in a full xGMI mesh, no switch: a pair of GPUs shares one link.
constexpr std::string_view kMi300x = R"pb(
  source: "data/hardware.csv MI300X: AMD MI300X spec (1307.4/2614.9 dense); 7 xGMI links x 128 GB/s bidir => 64 GB/s/dir P2P, 448 GB/s/dir all-to-all; MLCommons AMD 8xMI300X JSON (PCIe Gen5 x16); NIC 8x400G typical [HIGH compute/mem, MED NIC]; measured all-reduce busbw 47.7 (2 GPUs) vs 312.9 GB/s (8 GPUs), docs/sources.md §7"
  node_kind: MESH
  gpu {
    name: "MI300X"
    bf16_flops_per_s: 1307e12
    fp8_flops_per_s: 2615e12
    fp32_flops_per_s: 163e12
    hbm_bytes: 205822885888  # rocm-smi's VRAM total (data/hbm-capacity.csv)
    hbm_bytes_per_s: 5.3e12
  }
  scale_up {
    bytes_per_s: 448e9
    mesh_link_bytes_per_s: 64e9
    # 2 GPUs: 47.7 of one link's 64 GB/s. 8 GPUs: 312.9 of the 448 GB/s of all seven links.
    efficiency: 0.745
    aggregate_efficiency: 0.698
    domain_size: 8
    nvls: false
  }
  scale_out { nic_bits_per_s: 400e9 nics_per_gpu: 1 }
  pcie { generation: 5 bytes_per_s: 63e9 }
)pb";

// The cluster of vTrain's multi-node measurements (vTrain's A100 measurements, docs/sources.md §9):
// DGX A100-like nodes with 800 Gb/s of InfiniBand per node, and the dgx-a100 kernel compute model
// with the terms racksim calibrate fitted on those measurements (docs/validation.md, "Calibration
// that extrapolates": the two GEMM regimes under the flow model of the collectives; refitted on
// 6 December under DeepSpeed's pipeline order). The adopted
// calibration, scenarios/calibration/a100-kernel-calibration.textproto, refits the same terms with
// the cluster's measured all-reduce tables, which a preset cannot carry; include it to get them.
constexpr std::string_view kA100VtrainCluster = R"pb(
  source: "docs/sources.md §9: vTrain (MICRO'24) A100 cluster, 8 GPUs per node on NVLink/NVSwitch, 800 Gb/s inter-node per node (modelled as one 100 Gb/s port per GPU; the measurements give only the per-node rate); GPU figures of data/hardware.csv A100-80GB-SXM4; kernel-model terms fitted by racksim calibrate on vTrain's 1,440 single-node and 41 multi-node rows (docs/validation.md)"
  scale_out {
    nic_bits_per_s: 100e9
    nics_per_gpu: 1
    # Fitted on the 41 multi-node rows with the terms below held: what a step across nodes
    # costs beyond its kernels and collectives (measured as a term, not explained).
    step_overhead_s: 0.6884
  }
  compute {
    # Fitted on every tenth of the 1,440 single-node rows (docs/validation.md, "A fourth: a
    # GEMM's two regimes"; refitted on 8 December, when the first stage's embedding gained
    # Megatron's kernels): a GEMM that fills every SM capped at 0.7876 of the peak (the clocks
    # the 400 W limit holds), one SM's GEMM main loop at its whole share of the peak (the fit
    # stops at that bound, 1), split-K up to 8, and 68.38 us of host time per operation.
    # scenarios/calibration/a100-vtrain-cluster-fit.log.txt has both fits. The calibration file
    # (scenarios/calibration/a100-kernel-calibration.textproto) fits the same terms with the
    # cluster's measured all-reduce tables, which a preset cannot carry.
    gemm: 1
    gemm_sustained: 0.7876
    gemm_split_k_max: 8
    cpu_launch_floor_s: 6.838e-05
    # The fitted ceiling holds this cluster's power-limit drop: dgx-a100's borrowed one is off.
    sustained_clock_ratio: 1
  }
  # The fixed cost of one collective call, fitted with the terms before the refit and held in it.
  collectives { base_latency_s: 2.906e-05 }
)pb";

struct Preset {
  std::string_view name;
  std::string_view text;
  std::string_view base = {};       // a preset this one starts from
  std::string_view compute = {};    // a compute model shared by a GPU family
  std::string_view held_rate = {};  // the throughput held at the power limit (measured or borrowed)
  std::string_view attention = {};  // the fused attention's share of the peak, where measured
};

constexpr std::array<Preset, 11> kPresets = {{
    {"dgx-a100", kDgxA100, {}, {}, kGh100HeldRate},
    {"a100-vtrain-cluster", kA100VtrainCluster, "dgx-a100"},
    {"dgx-h100", kDgxH100, {}, kHopperCompute, kGh100HeldRate},
    {"dgx-h200", kDgxH200, {}, kHopperCompute, kGh100HeldRate},
    {"hgx-h800", kHgxH800, {}, kHopperCompute, kGh100HeldRate},
    {"hgx-b200", kHgxB200, {}, kBlackwellCompute, kGh100HeldRate, kBlackwellAttention},
    {"hgx-b300", kHgxB300, {}, kBlackwellCompute, kGh100HeldRate, kBlackwellUltraAttention},
    {"hgx-b300-mixed-nics",
     kHgxB300MixedNics,
     {},
     kBlackwellCompute,
     kGh100HeldRate,
     kBlackwellUltraAttention},
    {"gb200-nvl72", kGb200Nvl72, {}, kBlackwellCompute, kGh100HeldRate, kBlackwellAttention},
    {"gb300-nvl72", kGb300Nvl72, {}, kBlackwellCompute, kGh100HeldRate, kBlackwellUltraAttention},
    {"mi300x", kMi300x},
}};

// The texts are part of the program, so a parse failure is a bug, not bad input.
config::Hardware parse_builtin(std::string_view name, std::string_view text) {
  config::Hardware hardware;
  if (!google::protobuf::TextFormat::ParseFromString(std::string(text), &hardware)) {
    throw std::logic_error(fmt::format("built-in hardware text '{}' does not parse", name));
  }
  return hardware;
}

}  // namespace

config::Hardware hardware_defaults() {
  config::Hardware hardware = parse_builtin("defaults", kDefaults);
  hardware.MergeFrom(parse_builtin("power and cost defaults", power_cost_defaults_text()));
  return hardware;
}

std::optional<config::Hardware> hardware_preset(std::string_view name) {
  for (const Preset& preset : kPresets) {
    if (preset.name != name) continue;
    config::Hardware hardware = hardware_defaults();
    if (!preset.base.empty()) hardware = *hardware_preset(preset.base);
    for (std::string_view part :
         {preset.text, preset.compute, preset.held_rate, preset.attention}) {
      if (!part.empty()) hardware.MergeFrom(parse_builtin(preset.name, part));
    }
    if (auto figures = power_cost_preset_text(preset.name)) {
      hardware.MergeFrom(parse_builtin(preset.name, *figures));
    }
    hardware.set_preset(std::string(preset.name));
    return hardware;
  }
  return std::nullopt;
}

std::vector<std::string> hardware_preset_names() {
  std::vector<std::string> names;
  for (const Preset& preset : kPresets) names.emplace_back(preset.name);
  return names;
}

}  // namespace racksim::topo
