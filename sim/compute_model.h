// How long a compute operation takes on a GPU: a roofline with an efficiency per kernel class.
//
//   duration = max(FLOPs / (peak(dtype) x efficiency(class)),
//                  HBM bytes / (HBM bandwidth x hbm efficiency)) + launch overhead
//
// A recorded duration (from a trace) is used as is.
#pragma once

#include "proto/scenario.pb.h"
#include "workloads/event_graph.h"

namespace racksim::sim {

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
  double launch_overhead_s = 0;

  static ComputeModel from_hardware(const config::Hardware& hw);

  double peak_flops_per_s(DataType dtype) const;
  double efficiency(OpClass op_class) const;
  double duration_s(const Op& op) const;
};

}  // namespace racksim::sim
