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

double ComputeModel::duration_s(const Op& op) const {
  if (op.duration_s >= 0) return op.duration_s;
  const double flop_rate = peak_flops_per_s(op.dtype) * efficiency(op.op_class);
  const double byte_rate = hbm_bytes_per_s * hbm_efficiency;
  const double compute_s = flop_rate > 0 ? op.amount / flop_rate : 0;
  const double memory_s = byte_rate > 0 ? op.hbm_bytes / byte_rate : 0;
  return std::max(compute_s, memory_s) + launch_overhead_s;
}

}  // namespace racksim::sim
