#include "traces/kineto_gemm.h"

#include <array>

namespace racksim::kineto {

namespace {

constexpr std::array<std::string_view, 6> kGemmOps = {
    "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear"};

double product(const std::vector<double>& dims, size_t from, size_t to) {
  double p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

std::optional<KernelShape> checked(double batch, double m, double k, double k2, double n) {
  if (k != k2 || !(m > 0 && k > 0 && n > 0 && batch > 0)) return std::nullopt;
  KernelShape s;
  s.m = static_cast<float>(m);
  s.k = static_cast<float>(k);
  s.n = static_cast<float>(n);
  s.batch = static_cast<float>(batch);
  return s;
}

// [m,k] x [k,n] (mm), or [b,m,k] x [b,k,n] (bmm) when `batched`.
std::optional<KernelShape> plain(const std::vector<double>& a, const std::vector<double>& b,
                                 bool batched) {
  const size_t rank = batched ? 3 : 2;
  if (a.size() != rank || b.size() != rank) return std::nullopt;
  if (batched && a[0] != b[0]) return std::nullopt;
  return checked(batched ? a[0] : 1, a[rank - 2], a[rank - 1], b[rank - 2], b[rank - 1]);
}

std::optional<KernelShape> linear(const std::vector<double>& input,
                                  const std::vector<double>& weight) {
  if (input.empty() || weight.size() != 2) return std::nullopt;
  return checked(1, product(input, 0, input.size() - 1), input.back(), weight[1], weight[0]);
}

std::optional<KernelShape> matmul(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || b.size() < 2) return std::nullopt;  // vector operands: not a GEMM here
  if (b.size() == 2) return checked(1, product(a, 0, a.size() - 1), a.back(), b[0], b[1]);
  const double batch = product(a, 0, a.size() - 2);
  if (batch != product(b, 0, b.size() - 2)) return std::nullopt;  // broadcast batches: skip
  return checked(batch, a[a.size() - 2], a.back(), b[b.size() - 2], b.back());
}

}  // namespace

bool is_gemm_op(std::string_view op) {
  for (std::string_view g : kGemmOps) {
    if (op == g) return true;
  }
  return false;
}

std::optional<KernelShape> gemm_shape(std::string_view op,
                                      const std::vector<std::vector<double>>& dims) {
  auto at = [&](size_t i) -> const std::vector<double>& {
    static const std::vector<double> kNone;
    return i < dims.size() ? dims[i] : kNone;
  };
  if (op == "aten::mm") return plain(at(0), at(1), false);
  if (op == "aten::addmm") return plain(at(1), at(2), false);
  if (op == "aten::bmm") return plain(at(0), at(1), true);
  if (op == "aten::baddbmm") return plain(at(1), at(2), true);
  if (op == "aten::linear") return linear(at(0), at(1));
  if (op == "aten::matmul") return matmul(at(0), at(1));
  return std::nullopt;
}

void model_gemms(RankProgram& program, const GemmTimer& timer, GemmTiming* timing) {
  timing->model = true;
  for (ProgramOp& op : program.ops) {
    if (op.kind != ProgramOpKind::kKernel || program.streams[op.stream].kind == StreamKind::kHost)
      continue;
    if (!op.gemm.known()) {
      ++timing->recorded_kernels;
      timing->recorded_s += op.duration_s;
      continue;
    }
    ++timing->modelled_kernels;
    timing->modelled_recorded_s += op.duration_s;
    op.duration_s = op.gemm_first ? timer(op.gemm, op.gemm_dtype) : 0;
    timing->modelled_s += op.duration_s;
  }
}

}  // namespace racksim::kineto
