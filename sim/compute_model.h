// How long a compute operation takes on a GPU: a roofline with an efficiency per kernel class.
//
//   duration = max(FLOPs / (peak(dtype) x efficiency(class)),
//                  HBM bytes / (HBM bandwidth x hbm efficiency)) + launch overhead
//
// With gemm_half_dim > 0 a GEMM's efficiency depends on its shape (gemm_shape_efficiency).
//
// With the KERNEL model (hardware.compute.model), a GEMM whose shape the generator knows is timed
// from that shape (sim/gemm_model.h: tiles in waves over the SMs) against its HBM floor; every
// kernel also pays launch_overhead_s and lasts at least cpu_launch_floor_s (the host issuing it).
//
// A recorded duration (from a trace) is used as is.
#pragma once

#include <string_view>

#include "graph/event_graph.h"
#include "proto/scenario.pb.h"

namespace racksim::sim {

// What sets a compute operation's time under the model: the report splits a rank's compute time
// by it (analysis/compute_bounds.h), so that a step says how much of it the power limit, the
// waves of tiles, the HBM and the host each hold.
enum class KernelBound : uint8_t {
  kGemmSustained,  // a GEMM held at the sustained ceiling (gemm_sustained: the power limit)
  kGemmTiles,      // a GEMM's tiles in waves at the per-SM rate (part-empty waves, split-K)
  kGemmMemory,     // a GEMM held by its HBM bytes (thin decode GEMMs)
  kCompute,        // another kernel, or a GEMM without a known shape, at its class's FLOP rate
  kMemory,         // another kernel, or a GEMM without a known shape, held by its HBM bytes
  kHost,           // the host's time to issue it (cpu_launch_floor_s)
  kGiven,          // a recorded or fixed duration
};
inline constexpr int kNumKernelBounds = static_cast<int>(KernelBound::kGiven) + 1;  // the last
std::string_view to_string(KernelBound bound);  // as the report prints it
std::string_view json_key(KernelBound bound);   // its key in report.json

// A compute operation's time and the term of the model that sets it.
struct KernelTime {
  double seconds = 0;
  KernelBound bound = KernelBound::kGiven;
};

struct ComputeModel {
  double bf16_flops_per_s = 0;
  double fp8_flops_per_s = 0;
  double fp32_flops_per_s = 0;
  double hbm_bytes_per_s = 0;
  double gemm_efficiency = 1;
  double attention_efficiency = 1;
  double elementwise_efficiency = 1;
  double other_efficiency = 1;
  double hbm_efficiency = 1;
  double cast_hbm_efficiency = 0;  // FP8 cast kernels' share of the bandwidth (0: hbm_efficiency)
  double launch_overhead_s = 0;
  double gemm_half_dim = 0;   // 0: GEMM efficiency independent of the shape
  bool kernel_model = false;  // hardware.compute.model KERNEL
  int sm_count = 0;           // the SMs compute kernels get (the GPU's less comm_reserved_sms)
  // The share of the peak compute kernels get: (sm_count - comm_reserved_sms) / sm_count.
  double compute_sm_share = 1;
  double cpu_launch_floor_s = 0;
  // The host issues kernels ahead of the GPU (a queue): a kernel waits for its issue, not for
  // cpu_launch_floor_s of its own (Replay keeps each rank's issue clock).
  bool host_runs_ahead = false;
  double gemm_k_overhead = 0;
  double gemm_fp8_efficiency = 0;  // 0: gemm_efficiency
  double gemm_fp8_k_overhead = 0;  // 0: gemm_k_overhead
  // The fraction of its rate a GEMM keeps with a dimension not a multiple of 16 bytes.
  double gemm_unaligned = 1;
  int gemm_split_k_max = 1;   // 1: no split-K
  double gemm_sustained = 0;  // the whole GPU's GEMM ceiling, fraction of the peak (0: none)
  // The SM clock held at the power limit over the clock the rates were measured at (1: none).
  double sustained_clock_ratio = 1;

  static ComputeModel from_hardware(const config::Hardware& hw);

  double peak_flops_per_s(DataType dtype) const;
  // What compute kernels get of it: the peak less the SMs communication holds, at the clock the
  // power limit leaves them.
  double compute_peak_flops_per_s(DataType dtype) const {
    return peak_flops_per_s(dtype) * compute_sm_share * sustained_clock_ratio;
  }
  // The achievable fraction of the peak, and the K elements each output tile adds for its fixed
  // costs, of a GEMM kernel in `dtype` (FP8 has its own when the hardware gives them).
  struct GemmRate {
    double efficiency = 1;
    double k_overhead = 0;
  };
  GemmRate gemm_rate(DataType dtype) const;
  double efficiency(OpClass op_class) const;
  // The efficiency of this operation: its class's, shaped for GEMMs.
  double efficiency(const Op& op) const;
  double duration_s(const Op& op) const { return duration_s(op, KernelShape{}); }
  // `shape`: the op's GEMM shape (EventGraph::shape(op.shape)), used by the KERNEL model.
  double duration_s(const Op& op, const KernelShape& shape) const {
    return timed(op, shape).seconds;
  }
  // The same duration with the term that sets it.
  KernelTime timed(const Op& op, const KernelShape& shape) const;
  // The host's time to issue the op's kernels (0 for a recorded duration or the roofline).
  double host_issue_s(const Op& op, const KernelShape& shape) const;
  // One GEMM kernel of `batch` products m x k x n in `dtype` on `sms` of the GPU's SMs: its tiles
  // in waves (sim/gemm_model.h), split-K where allowed, no faster than the sustained ceiling; no
  // launch overhead, no HBM floor.
  double gemm_kernel_s(double m, double k, double n, double batch, DataType dtype, int sms) const {
    return gemm_kernel_time(m, k, n, batch, dtype, sms).seconds;
  }

 private:
  KernelTime roofline_time(const Op& op) const;
  KernelTime kernel_time(const Op& op, const KernelShape& shape) const;
  KernelTime gemm_time(const Op& op, const KernelShape& shape) const;
  // kGemmSustained where the ceiling sets it, else kGemmTiles.
  // streams > 0: the products are kernels of their own on that many streams (gemm_streams_cost).
  KernelTime gemm_kernel_time(double m, double k, double n, double batch, DataType dtype, int sms,
                              double streams = 0) const;
};

// The harmonic-mean dimension 3 / (1/m + 1/k + 1/n) of a GEMM of `flops` = 2mkn reading and
// writing `hbm_bytes` = (mk + kn + mn) x elem_bytes: 3 x flops / (2 x elements). 0 without bytes.
double gemm_harmonic_dim(double flops, double hbm_bytes, double elem_bytes);

// A saturation curve in the GEMM's size: peak_efficiency x d / (d + half_dim). A GEMM whose
// smallest dimension is small (d is dominated by it) loads each tile for little work; large
// GEMMs approach peak_efficiency. half_dim <= 0 or d unknown: peak_efficiency.
double gemm_shape_efficiency(double peak_efficiency, double harmonic_dim, double half_dim);

}  // namespace racksim::sim
