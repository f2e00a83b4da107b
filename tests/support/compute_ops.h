// A generated layer step as the compute operation the engine would replay (BF16), for tests of
// the compute model that start from the ledger's steps.
#pragma once

#include "graph/event_graph.h"
#include "sim/compute_model.h"
#include "workloads/model/layer_steps.h"

namespace racksim::testing {

// A compute operation of one kind of kernel: `amount` FLOPs moving `hbm_bytes` through HBM.
inline Op compute_op(OpClass op_class, double amount, double hbm_bytes = 0,
                     DataType dtype = DataType::kBf16) {
  Op op;
  op.kind = OpKind::kCompute;
  op.op_class = op_class;
  op.dtype = dtype;
  op.amount = amount;
  op.hbm_bytes = hbm_bytes;
  return op;
}

inline Op op_of(const LayerStep& step) {
  Op op;
  op.kind = OpKind::kCompute;
  op.amount = step.flops;
  op.hbm_bytes = step.hbm_bytes;
  op.op_class = step.op_class;
  op.dtype = DataType::kBf16;
  return op;
}

// An A100 under the KERNEL model (312 TFLOP/s over 108 SMs, 2.039 TB/s), GEMMs at `gemm` of the
// peak per SM; no launch overhead and no host floor unless a test sets them.
inline sim::ComputeModel kernel_a100_model(double gemm) {
  sim::ComputeModel m;
  m.bf16_flops_per_s = 312e12;
  m.hbm_bytes_per_s = 2.039e12;
  m.gemm_efficiency = gemm;
  m.hbm_efficiency = 0.85;
  m.elementwise_efficiency = 0.9;
  m.kernel_model = true;
  m.sm_count = 108;
  return m;
}

}  // namespace racksim::testing
