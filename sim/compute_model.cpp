#include "sim/compute_model.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "sim/gemm_model.h"

namespace racksim::sim {

ComputeModel ComputeModel::from_hardware(const config::Hardware& hw) {
  ComputeModel m;
  m.bf16_flops_per_s = hw.gpu().bf16_flops_per_s();
  m.fp8_flops_per_s = hw.gpu().fp8_flops_per_s();
  m.fp32_flops_per_s = hw.gpu().fp32_flops_per_s();
  m.hbm_bytes_per_s = hw.gpu().hbm_bytes_per_s();
  m.gemm_efficiency = hw.compute().gemm();
  m.attention_efficiency = hw.compute().attention();
  m.elementwise_efficiency = hw.compute().elementwise();
  m.other_efficiency = hw.compute().elementwise();
  m.hbm_efficiency = hw.compute().hbm();
  m.cast_hbm_efficiency = hw.compute().fp8_cast();
  m.launch_overhead_s = hw.compute().launch_overhead_s();
  m.gemm_half_dim = hw.compute().gemm_half_dim();
  m.kernel_model = hw.compute().model() == config::ComputeEfficiency::KERNEL;
  m.sm_count = hw.gpu().sm_count();
  const int reserved = hw.compute().comm_reserved_sms();
  if (m.sm_count > reserved && reserved > 0) {
    m.compute_sm_share = static_cast<double>(m.sm_count - reserved) / m.sm_count;
    m.sm_count -= reserved;
  }
  m.cpu_launch_floor_s = hw.compute().cpu_launch_floor_s();
  m.host_runs_ahead = hw.compute().host_issue() == config::ComputeEfficiency::AHEAD;
  m.gemm_k_overhead = hw.compute().gemm_k_overhead();
  m.gemm_fp8_efficiency = hw.compute().gemm_fp8();
  m.gemm_fp8_k_overhead = hw.compute().gemm_fp8_k_overhead();
  if (hw.compute().has_gemm_unaligned()) m.gemm_unaligned = hw.compute().gemm_unaligned();
  m.gemm_split_k_max = std::max(1, hw.compute().gemm_split_k_max());
  m.gemm_sustained = hw.compute().gemm_sustained();
  if (hw.compute().has_sustained_clock_ratio()) {
    m.sustained_clock_ratio = hw.compute().sustained_clock_ratio();
  }
  return m;
}

double ComputeModel::peak_flops_per_s(DataType dtype) const {
  switch (dtype) {
    case DataType::kFp8:
      return fp8_flops_per_s > 0 ? fp8_flops_per_s : bf16_flops_per_s;
    // FP32 element-wise math runs on CUDA cores; without a figure, assume BF16 / 16.
    case DataType::kFp32:
      return fp32_flops_per_s > 0 ? fp32_flops_per_s : bf16_flops_per_s / 16;
    default:
      return bf16_flops_per_s;
  }
}

ComputeModel::GemmRate ComputeModel::gemm_rate(DataType dtype) const {
  if (dtype != DataType::kFp8) return {gemm_efficiency, gemm_k_overhead};
  return {gemm_fp8_efficiency > 0 ? gemm_fp8_efficiency : gemm_efficiency,
          gemm_fp8_k_overhead > 0 ? gemm_fp8_k_overhead : gemm_k_overhead};
}

double ComputeModel::efficiency(OpClass op_class) const {
  switch (op_class) {
    case OpClass::kGemm:
      return gemm_efficiency;
    case OpClass::kAttention:
      return attention_efficiency;
    case OpClass::kElementwise:
    case OpClass::kCast:
      return elementwise_efficiency;
    case OpClass::kOther:
      return other_efficiency;
  }
  return 1;
}

double ComputeModel::efficiency(const Op& op) const {
  const double base =
      op.op_class == OpClass::kGemm ? gemm_rate(op.dtype).efficiency : efficiency(op.op_class);
  if (op.op_class != OpClass::kGemm || gemm_half_dim <= 0) return base;
  const double d = gemm_harmonic_dim(op.amount, op.hbm_bytes, bytes_per_element(op.dtype));
  return gemm_shape_efficiency(base, d, gemm_half_dim);
}

KernelTime ComputeModel::timed(const Op& op, const KernelShape& shape) const {
  if (op.duration_s >= 0) return {op.duration_s, KernelBound::kGiven};
  return kernel_model ? kernel_time(op, shape) : roofline_time(op);
}

namespace {

// A GEMM the kernel model times from its shape (tiles in waves over the SMs).
bool shaped_gemm(const Op& op, const KernelShape& shape, int sm_count) {
  return op.op_class == OpClass::kGemm && shape.known() && sm_count > 0;
}

// The kernels one product of a shaped GEMM launches: one per product when the products run on
// streams of their own (KernelShape::streams), else one for the whole batch.
double kernels_per_pass(const KernelShape& shape) {
  return shape.streams > 0 ? std::max(1.0, std::round(double{shape.batch})) : 1;
}

// The kernels the op launches: a shaped GEMM's backward runs its two products as two passes.
double kernels_of(const Op& op, const KernelShape& shape, int sm_count) {
  if (!shaped_gemm(op, shape, sm_count)) return 1;
  const double passes = shape.pass == GemmPass::kBackward ? 2 : 1;
  return passes * kernels_per_pass(shape);
}

// The kernels that follow one another on a stream: each pays the launch overhead in turn, where
// kernels on other streams pay theirs alongside.
double serial_kernels(const Op& op, const KernelShape& shape, int sm_count) {
  const double kernels = kernels_of(op, shape, sm_count);
  if (shape.streams <= 0) return kernels;
  const double per_pass = kernels_per_pass(shape);
  return kernels / per_pass * std::ceil(per_pass / shape.streams);
}

}  // namespace

double ComputeModel::host_issue_s(const Op& op, const KernelShape& shape) const {
  if (!kernel_model || op.duration_s >= 0) return 0;
  return kernels_of(op, shape, sm_count) * cpu_launch_floor_s;
}

KernelTime ComputeModel::kernel_time(const Op& op, const KernelShape& shape) const {
  const bool gemm = shaped_gemm(op, shape, sm_count);
  const double kernels = kernels_of(op, shape, sm_count);
  KernelTime gpu = gemm ? gemm_time(op, shape) : roofline_time(op);
  if (gemm) gpu.seconds += serial_kernels(op, shape, sm_count) * launch_overhead_s;
  if (host_runs_ahead) return gpu;
  const double host_s = kernels * cpu_launch_floor_s;
  return host_s > gpu.seconds ? KernelTime{host_s, KernelBound::kHost} : gpu;
}

// The op's GEMMs from their shapes, scaled to its FLOPs (a MoE expert kernel doing the work of
// the tokens it received, a ring-attention slice), against the HBM floor of its bytes.
KernelTime ComputeModel::gemm_time(const Op& op, const KernelShape& shape) const {
  // SMs held by a communication kernel beside this GEMM take their share of the peak with them.
  const int sms = std::max(1, sm_count - static_cast<int>(shape.reserved_sms));
  KernelTime time{0, KernelBound::kGemmTiles};
  auto add = [&](double m, double k, double n) {
    const KernelTime one = gemm_kernel_time(m, k, n, shape.batch, op.dtype, sms, shape.streams);
    time.seconds += one.seconds;
    if (one.bound == KernelBound::kGemmSustained) time.bound = one.bound;
  };
  if (shape.pass == GemmPass::kForward) add(shape.m, shape.k, shape.n);
  if (shape.pass == GemmPass::kInputGrad || shape.pass == GemmPass::kBackward) {
    add(shape.m, shape.n, shape.k);  // dA[m,k] = dC[m,n] B^T
  }
  if (shape.pass == GemmPass::kWeightGrad || shape.pass == GemmPass::kBackward) {
    add(shape.k, shape.m, shape.n);  // dB[k,n] = A^T dC
  }
  // Tensor Core kernels load 16 bytes at a time. The weight's two dimensions (k and n) are the
  // operands' row lengths in all three products; off that grain they take narrower loads.
  const double grain = 16 / bytes_per_element(op.dtype);
  if (std::fmod(shape.k, grain) != 0 || std::fmod(shape.n, grain) != 0) {
    time.seconds /= gemm_unaligned;
  }
  const double nominal = shape.flops();
  if (nominal > 0) time.seconds *= op.amount / nominal;
  const double byte_rate = hbm_bytes_per_s * hbm_efficiency;
  const double memory_s = byte_rate > 0 ? op.hbm_bytes / byte_rate : 0;
  return memory_s >= time.seconds ? KernelTime{memory_s, KernelBound::kGemmMemory} : time;
}

KernelTime ComputeModel::gemm_kernel_time(double m, double k, double n, double batch,
                                          DataType dtype, int sms, double streams) const {
  const double peak = compute_peak_flops_per_s(dtype) * sms / std::max(1, sm_count);
  const GemmRate rate = gemm_rate(dtype);
  const GemmSplitK split_k{gemm_split_k_max, hbm_bytes_per_s * hbm_efficiency};
  const double tiles_s =
      streams > 0
          ? gemm_streams_cost(m, k, n, batch, static_cast<int>(streams), sms, peak, rate.efficiency,
                              rate.k_overhead, split_k)
                .seconds
          : gemm_kernel_cost(m, k, n, batch, sms, peak, rate.efficiency, rate.k_overhead, split_k)
                .seconds;
  // FP8 GEMMs keep their own fitted rate (gemm_fp8); the ceiling is the 16-bit MAMF figure.
  const double ceiling = dtype == DataType::kFp8 ? 0 : gemm_sustained * peak;
  const double ceiling_s = ceiling > 0 ? 2 * m * k * n * std::max(1.0, batch) / ceiling : 0;
  return ceiling_s > tiles_s ? KernelTime{ceiling_s, KernelBound::kGemmSustained}
                             : KernelTime{tiles_s, KernelBound::kGemmTiles};
}

namespace {

// Per KernelBound, in its order: what the report prints, and the report.json key.
constexpr std::array<std::array<std::string_view, 2>, kNumKernelBounds> kBoundNames = {{
    {"GEMMs at the sustained ceiling", "gemm_sustained"},
    {"GEMM tiles and waves", "gemm_tiles"},
    {"GEMMs held by HBM", "gemm_hbm"},
    {"FLOP-bound kernels", "flop_bound"},
    {"HBM-bound kernels", "hbm_bound"},
    {"host-bound kernels", "host_bound"},
    {"fixed durations", "fixed"},
}};

}  // namespace

std::string_view to_string(KernelBound bound) {
  return kBoundNames[static_cast<size_t>(bound)][0];
}

std::string_view json_key(KernelBound bound) {
  return kBoundNames[static_cast<size_t>(bound)][1];
}

KernelTime ComputeModel::roofline_time(const Op& op) const {
  const double flop_rate = compute_peak_flops_per_s(op.dtype) * efficiency(op);
  const bool own_cast_rate = op.op_class == OpClass::kCast && cast_hbm_efficiency > 0;
  const double byte_rate = hbm_bytes_per_s * (own_cast_rate ? cast_hbm_efficiency : hbm_efficiency);
  const double compute_s = flop_rate > 0 ? op.amount / flop_rate : 0;
  const double memory_s = byte_rate > 0 ? op.hbm_bytes / byte_rate : 0;
  return {std::max(compute_s, memory_s) + launch_overhead_s,
          memory_s > compute_s ? KernelBound::kMemory : KernelBound::kCompute};
}

double gemm_harmonic_dim(double flops, double hbm_bytes, double elem_bytes) {
  if (hbm_bytes <= 0 || elem_bytes <= 0) return 0;
  return 3 * flops / (2 * (hbm_bytes / elem_bytes));
}

double gemm_shape_efficiency(double peak_efficiency, double harmonic_dim, double half_dim) {
  if (half_dim <= 0 || harmonic_dim <= 0) return peak_efficiency;
  return peak_efficiency * harmonic_dim / (harmonic_dim + half_dim);
}

}  // namespace racksim::sim
