#include "workloads/training/rank_writer.h"

#include <cmath>

namespace racksim {

std::vector<OpId> ComputeChain::inputs() const {
  std::vector<OpId> deps = pending;
  if (last_compute != kNoOp) deps.push_back(last_compute);
  return deps;
}

OpContext RankWriter::context(StreamId stream, const OpTag& tag) const {
  return OpContext{rank_, stream, tag.phase, tag.micro_batch, static_cast<int16_t>(tag.layer)};
}

namespace {

// HBM bytes of Transformer Engine's FP8 work before an FP8 linear GEMM of `step`: the pass that
// finds each tensor's amax (current scaling only) and the cast. The forward casts its input
// activations with a transposed copy for the weight gradient (read 2 B, write 1 + 1 B per
// element), and in the step's first micro-batch the weights likewise (cached for the others:
// is_first_microbatch); the backward casts the output gradient with its transpose once for both
// gradient GEMMs (under current scaling after an amax pass, except where the activation's
// backward found the amax as it wrote the gradient). Where the kernel before is fused with the cast
// (LayerNormLinear, LayerNormMLP), delayed scaling has it write FP8, so the cast only transposes
// (read 1 B, write 1 B); current scaling cannot (the scale needs the whole output's amax), so that
// kernel writes BF16 and finds the amax as it goes, and the cast is a whole one. Expert GEMMs scale
// with the tokens their experts received, as their FLOPs do. FP8 parameters need no weight cast:
// the first micro-batch transposes them (read 1 B, write 1 B), scaled already by the optimizer.
constexpr double kBytesPerCastElement = 2 + 1 + 1;
constexpr double kBytesPerAmaxElement = 2;  // read the BF16 tensor once
constexpr double kBytesPerTransposeElement = 1 + 1;

struct Fp8Bytes {
  double amax = 0;
  double cast = 0;
};

Fp8Bytes fp8_bytes(const LayerStep& step, const OpTag& tag, const Fp8Recipe& fp8) {
  const KernelShape& s = step.shape;
  if (!s.known() || s.flops() <= 0) return {};
  const double load = step.flops / s.flops();
  const bool current = fp8.scaling == Fp8Scaling::kCurrent;
  const double amax = current ? kBytesPerAmaxElement : 0;
  switch (s.pass) {
    case GemmPass::kForward: {
      const double weights = tag.phase == Phase::kForward && tag.micro_batch == 0 ? s.k * s.n : 0;
      const double inputs = s.m * s.k * load;
      // The weights' amax and cast, or with FP8 parameters their transpose alone.
      const double weight_amax = fp8.fp8_params ? 0 : amax * weights;
      const double weight_cast =
          (fp8.fp8_params ? kBytesPerTransposeElement : kBytesPerCastElement) * weights;
      if (step.fp8_input_fused) {
        return {s.batch * weight_amax,
                s.batch * ((current ? kBytesPerCastElement : 1 + 1) * inputs + weight_cast)};
      }
      return {s.batch * (amax * inputs + weight_amax),
              s.batch * (kBytesPerCastElement * inputs + weight_cast)};
    }
    case GemmPass::kBackward:
    case GemmPass::kInputGrad: {
      const double gradients = s.batch * s.m * s.n * load;
      return {step.fp8_grad_fused ? 0 : amax * gradients, kBytesPerCastElement * gradients};
    }
    case GemmPass::kWeightGrad:
      return {};
  }
  return {};
}

// A linear layer's weight-gradient GEMM, or an embedding table's backward (which writes its
// table's gradient).
bool computes_weight_gradient(const LayerStep& step) {
  return step.weight_elements > 0 &&
         (step.shape.pass == GemmPass::kWeightGrad || step.shape.pass == GemmPass::kBackward);
}

// HBM bytes the accumulation of a weight gradient adds per weight element: to the GEMM itself
// when fused (it reads and writes the buffer instead of writing its own output), or as a kernel
// of its own (reads the GEMM's output and the buffer, writes the buffer; autograd skips a rank's
// first micro-batch, whose gradient it stores as it is).
struct AccumulationBytes {
  double in_gemm = 0;
  double own_kernel = 0;
};

// Only a GEMM can fuse the accumulation: an embedding table's gradient under FUSED_IN_WGRAD is
// added to the buffer by Megatron's gradient hook (main_grad.add_), as under MAIN_GRAD_ADD.
AccumulationBytes accumulation_bytes(const GradAccumulation& a, DataType output, const OpTag& tag,
                                     bool gemm) {
  const double out = bytes_per_element(output);
  const double buffer = bytes_per_element(a.buffer);
  switch (a.mode) {
    case config::Training::MAIN_GRAD_ADD:
      return {0, out + 2 * buffer};
    case config::Training::AUTOGRAD:
      return {0, tag.micro_batch > 0 ? 3 * out : 0};
    default:
      return gemm ? AccumulationBytes{2 * buffer - out, 0} : AccumulationBytes{0, out + 2 * buffer};
  }
}

}  // namespace

OpId RankWriter::kernel(ComputeChain& chain, StreamId stream, const LayerStep& step,
                        const OpTag& tag) {
  // Mixed precision (FP8 training): only the linear layers' GEMMs take the GEMM dtype, each after
  // its casts; otherwise every GEMM does.
  const bool mixed = gemm_dtype_ != dtype_;
  const bool in_gemm_dtype = step.op_class == OpClass::kGemm && (step.fp8_linear || !mixed);
  const DataType dtype = in_gemm_dtype ? gemm_dtype_ : dtype_;
  if (mixed && in_gemm_dtype && gemm_dtype_ == DataType::kFp8) {
    const Fp8Bytes bytes = fp8_bytes(step, tag, fp8_);
    if (bytes.amax > 0) {
      const OpId amax =
          graph_->add_compute(context(stream, tag), step.name + ".fp8_amax", OpClass::kElementwise,
                              bytes.amax / kBytesPerAmaxElement, bytes.amax, dtype_, chain.pending);
      chain.pending.assign(1, amax);
    }
    if (bytes.cast > 0) {
      const OpId cast =
          graph_->add_compute(context(stream, tag), step.name + ".fp8_cast", OpClass::kCast,
                              bytes.cast / kBytesPerCastElement, bytes.cast, dtype_, chain.pending);
      chain.pending.assign(1, cast);
    }
  }
  const AccumulationBytes accumulation =
      computes_weight_gradient(step)
          ? accumulation_bytes(accumulation_, dtype_, tag, step.op_class == OpClass::kGemm)
          : AccumulationBytes{};
  OpId id = graph_->add_compute(context(stream, tag), step.name, step.op_class, step.flops,
                                step.hbm_bytes + accumulation.in_gemm * step.weight_elements, dtype,
                                chain.pending, step.shape);
  if (accumulation.own_kernel > 0) {
    const OpId gemm[] = {id};
    id = graph_->add_compute(context(stream, tag), step.name + ".grad_accumulate",
                             OpClass::kElementwise, step.weight_elements,
                             accumulation.own_kernel * step.weight_elements, dtype_, gemm);
  }
  chain.pending.clear();
  chain.last_compute = id;
  return id;
}

OpId RankWriter::collective(ComputeChain& chain, StreamId stream, const std::string& name,
                            CollectiveKind kind, CommId comm, double bytes, CommDim dim,
                            const OpTag& tag, uint32_t weights) {
  // The collective reduces what the compute stream produced, or gathers what it was about to
  // consume (e.g. a received gradient), so it waits for both.
  const OpId id = graph_->add_collective(context(stream, tag), name, kind, comm, bytes, dim,
                                         chain.inputs(), weights);
  chain.pending.assign(1, id);
  return id;
}

OpId RankWriter::detached_collective(StreamId stream, const std::string& name, CollectiveKind kind,
                                     CommId comm, double bytes, CommDim dim, const OpTag& tag,
                                     const std::vector<OpId>& deps) {
  return graph_->add_collective(context(stream, tag), name, kind, comm, bytes, dim, deps);
}

OpId RankWriter::send(ComputeChain& chain, StreamId stream, const std::string& name, RankId peer,
                      uint32_t tag, double bytes, CommDim dim, bool blocking, const OpTag& op_tag) {
  const OpId id =
      graph_->add_send(context(stream, op_tag), name, peer, tag, bytes, dim, chain.inputs());
  chain.pending.clear();
  if (blocking) chain.pending.push_back(id);
  return id;
}

OpId RankWriter::recv(ComputeChain& chain, StreamId stream, const std::string& name, RankId peer,
                      uint32_t tag, double bytes, CommDim dim, const OpTag& op_tag) {
  const OpId id = graph_->add_recv(context(stream, op_tag), name, peer, tag, bytes, dim);
  chain.pending.push_back(id);
  return id;
}

std::pair<uint32_t, uint32_t> add_dedup_weights(EventGraph& graph,
                                                const std::vector<double>& matrix) {
  if (matrix.empty()) return {0, 0};
  const auto n = static_cast<size_t>(std::lround(std::sqrt(static_cast<double>(matrix.size()))));
  std::vector<double> forward{static_cast<double>(WeightedAllToAll::kMatrix)};
  forward.insert(forward.end(), matrix.begin(), matrix.end());
  std::vector<double> back(forward.size());
  back[0] = forward[0];
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) back[1 + j * n + i] = matrix[i * n + j];
  }
  return {graph.add_weights(std::move(forward)), graph.add_weights(std::move(back))};
}

}  // namespace racksim
