// GEMMs a Kineto trace lets racksim recognize, for `racksim replay --compute model`: the CPU op
// that launched a kernel (aten::mm, addmm, bmm, baddbmm, matmul, linear) with its recorded
// `Input Dims` gives the product's shape, which the compute model times for the target GPU
// (sim/gemm_model.h) instead of the recorded duration.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "graph/event_graph.h"
#include "traces/kineto_program.h"

namespace racksim::kineto {

// Whether `op` (a cpu_op name) is one of the GEMM operators above.
bool is_gemm_op(std::string_view op);

// The shape of the GEMM `op` runs on inputs of `dims` (Kineto's Input Dims, one list per
// input; empty lists for non-tensor inputs):
//   aten::mm       [m,k] [k,n]                      aten::bmm      [b,m,k] [b,k,n]
//   aten::addmm    [bias] [m,k] [k,n]               aten::baddbmm  [bias] [b,m,k] [b,k,n]
//   aten::linear   [..., k] [n,k] [bias]: m = the product of the leading dimensions
//   aten::matmul   [..., m, k] [k, n] (m: leading dimensions folded in), or [..., m, k]
//                  [..., k, n] (a batch of the leading dimensions)
// nullopt when the dimensions do not fit the operator (inner dimensions that differ, missing
// inputs, a vector operand): the kernel keeps its recorded duration.
std::optional<KernelShape> gemm_shape(std::string_view op,
                                      const std::vector<std::vector<double>>& dims);

// Seconds the compute model gives a GEMM of this shape and element type on the target GPU.
using GemmTimer = std::function<double(const KernelShape&, DataType)>;

// What --compute model did to the GPU kernels (compute ops, not collectives or copies) of the
// programs: how many it timed from their GEMM shape, and how many kept their recorded time.
struct GemmTiming {
  bool model = false;              // --compute model was asked for
  uint64_t modelled_kernels = 0;   // kernels inside a recognised GEMM operator
  double modelled_s = 0;           // the time the model gave them
  double modelled_recorded_s = 0;  // the time they took in the trace
  uint64_t recorded_kernels = 0;   // the other kernels, memsets and device copies
  double recorded_s = 0;
};

// Times `program`'s GEMM kernels by `timer`: the first kernel of each GEMM operator gets the
// model's time for the operator's shape, its later kernels (a split-K reduction) none, as the
// model's time covers the whole product. Other kernels keep their recorded durations.
void model_gemms(RankProgram& program, const GemmTimer& timer, GemmTiming* timing);

}  // namespace racksim::kineto
