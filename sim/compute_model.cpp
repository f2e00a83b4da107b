#include "sim/compute_model.h"

#include <algorithm>

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
  m.launch_overhead_s = hw.compute().launch_overhead_s();
  m.gemm_half_dim = hw.compute().gemm_half_dim();
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

double ComputeModel::efficiency(OpClass op_class) const {
  switch (op_class) {
    case OpClass::kGemm:
      return gemm_efficiency;
    case OpClass::kAttention:
      return attention_efficiency;
    case OpClass::kElementwise:
      return elementwise_efficiency;
    case OpClass::kOther:
      return other_efficiency;
  }
  return 1;
}

double ComputeModel::efficiency(const Op& op) const {
  const double base = efficiency(op.op_class);
  if (op.op_class != OpClass::kGemm || gemm_half_dim <= 0) return base;
  const double d = gemm_harmonic_dim(op.amount, op.hbm_bytes, bytes_per_element(op.dtype));
  return gemm_shape_efficiency(base, d, gemm_half_dim);
}

double ComputeModel::duration_s(const Op& op) const {
  if (op.duration_s >= 0) return op.duration_s;
  const double flop_rate = peak_flops_per_s(op.dtype) * efficiency(op);
  const double byte_rate = hbm_bytes_per_s * hbm_efficiency;
  const double compute_s = flop_rate > 0 ? op.amount / flop_rate : 0;
  const double memory_s = byte_rate > 0 ? op.hbm_bytes / byte_rate : 0;
  return std::max(compute_s, memory_s) + launch_overhead_s;
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
