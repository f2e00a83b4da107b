#include <fmt/format.h>

#include "cli/commands.h"
#include "proto/scenario.pb.h"
#include "topologies/hardware_presets.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/framework_presets.h"

namespace racksim::cli {
namespace {

// Where a preset holds its kernels below the rates they were benchmarked at, the line says so:
// the TFLOP/s above are the datasheet's, not what a step gets.
void print_power_limit(const config::ComputeEfficiency& compute) {
  if (compute.has_sustained_clock_ratio() && compute.sustained_clock_ratio() != 1) {
    fmt::print(
        "  {:<19} power limit: FLOP-bound kernels at {} of their benchmarked rates through a step "
        "(hardware.compute.sustained_clock_ratio)\n",
        "", compute.sustained_clock_ratio());
  }
  if (compute.gemm_sustained() != 0) {
    fmt::print(
        "  {:<19} power limit: GEMMs that fill the GPU at {} of the peak "
        "(hardware.compute.gemm_sustained)\n",
        "", compute.gemm_sustained());
  }
}

}  // namespace

int presets_command(const std::vector<std::string>&) {
  fmt::print("models:\n");
  for (const auto& name : model_preset_names()) {
    const auto m = model_preset(name);
    fmt::print(
        "  {:<14} hidden {:>6}, {:>3} layers, {:>3} heads ({} KV), FFN {:>6}, vocab {}  [{}]\n",
        name, m->hidden_size(), m->num_layers(), m->num_heads(), m->num_kv_heads(),
        m->ffn_hidden_size(), m->vocab_size(), m->source());
  }
  fmt::print("hardware (per GPU; bandwidth per direction):\n");
  for (const auto& name : topo::hardware_preset_names()) {
    const auto h = topo::hardware_preset(name);
    fmt::print(
        "  {:<19} {:<11} {:>5.0f} TFLOP/s BF16, {:>4.0f} GB HBM at {:.2f} TB/s, scale-up {:.0f} "
        "GB/s, NIC {:.0f} Gb/s\n",
        name, h->gpu().name(), h->gpu().bf16_flops_per_s() / 1e12, h->gpu().hbm_bytes() / 1e9,
        h->gpu().hbm_bytes_per_s() / 1e12, h->scale_up().bytes_per_s() / 1e9,
        h->scale_out().nic_bits_per_s() / 1e9);
    print_power_limit(h->compute());
    fmt::print("  {:<19} source: {}\n", "", h->source());
  }
  fmt::print("frameworks (training.framework; the fields each sets: docs/scenarios.md):\n");
  for (const auto& name : framework_preset_names()) {
    const auto f = framework_preset(name);
    fmt::print("  {:<19} {}\n", name, f->what);
    fmt::print("  {:<19} source: {}\n", "", f->source);
  }
  return 0;
}

}  // namespace racksim::cli
