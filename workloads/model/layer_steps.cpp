#include "workloads/model/layer_steps.h"

namespace racksim {

LayerStep compute_step(std::string name, OpClass op_class, double flops, double hbm_bytes) {
  LayerStep s;
  s.kind = LayerStep::Kind::kCompute;
  s.name = std::move(name);
  s.op_class = op_class;
  s.flops = flops;
  s.hbm_bytes = hbm_bytes;
  return s;
}

LayerStep gemm_step(std::string name, double m, double k, double n, double elem_bytes) {
  LayerStep s = batched_gemm_step(std::move(name), 1, m, k, n, elem_bytes);
  s.fp8_linear = true;
  s.weight_elements = k * n;
  return s;
}

LayerStep batched_gemm_step(std::string name, double batch, double m, double k, double n,
                            double elem_bytes) {
  LayerStep s = compute_step(std::move(name), OpClass::kGemm, 2 * m * k * n * batch,
                             elem_bytes * (m * k + k * n + m * n) * batch);
  s.input_grad_factor = 1;
  s.weight_grad_factor = 1;
  s.shape = KernelShape{static_cast<float>(m), static_cast<float>(k), static_cast<float>(n),
                        static_cast<float>(batch), GemmPass::kForward};
  return s;
}

LayerStep elementwise_step(std::string name, double elements_touched, double flops,
                           double elem_bytes) {
  return compute_step(std::move(name), OpClass::kElementwise, flops, elem_bytes * elements_touched);
}

LayerStep recompute_copy(LayerStep step) {
  step.name += ".recompute";
  return step;
}

void append_recompute_copies(const std::vector<LayerStep>& steps, size_t first,
                             std::vector<LayerStep>* out) {
  for (size_t i = first; i < steps.size(); ++i) out->push_back(recompute_copy(steps[i]));
}

LayerStep norm_step(std::string name, double elements, double elem_bytes) {
  constexpr double kFlopsPerElement = 8;
  return elementwise_step(std::move(name), 2 * elements, kFlopsPerElement * elements, elem_bytes);
}

LayerStep activation_step(std::string name, bool gated, double outputs, double elem_bytes) {
  constexpr double kFlopsPerOutput = 8;
  return elementwise_step(std::move(name), (gated ? 3 : 2) * outputs, kFlopsPerOutput * outputs,
                          elem_bytes);
}

LayerStep attention_step(std::string name, double flops, double hbm_bytes) {
  LayerStep s = compute_step(std::move(name), OpClass::kAttention, flops, hbm_bytes);
  s.input_grad_factor = 2.5;
  return s;
}

void append_elementwise_kernels(const std::string& name, std::span<const ElementwiseKernel> kernels,
                                double elements, std::vector<LayerStep>& steps) {
  for (const ElementwiseKernel& k : kernels) {
    LayerStep step = compute_step(name + k.suffix, OpClass::kElementwise, k.flops * elements,
                                  k.forward_bytes * elements);
    step.backward_bytes_factor = k.backward_bytes / k.forward_bytes;
    if (k.backward_bytes == 0) step.input_grad_factor = 0;
    steps.push_back(step);
  }
}

LayerStep collective_step(std::string name, std::optional<CollectiveKind> forward,
                          std::optional<CollectiveKind> backward, CommDim dim, double bytes) {
  LayerStep s;
  s.kind = LayerStep::Kind::kCollective;
  s.name = std::move(name);
  s.forward = forward;
  s.backward = backward;
  s.dim = dim;
  s.bytes = bytes;
  return s;
}

namespace {

LayerStep backward_kernel(const LayerStep& fwd, const std::string& suffix, double flop_factor,
                          double bytes_share, GemmPass pass) {
  LayerStep b = fwd;
  b.shape.pass = pass;
  b.name = fwd.name + suffix;
  b.flops = fwd.flops * flop_factor;
  b.hbm_bytes = fwd.hbm_bytes * fwd.backward_bytes_factor * bytes_share;
  return b;
}

LayerStep backward_collective(const LayerStep& fwd) {
  LayerStep b = fwd;
  b.name = fwd.name + ".bwd";
  b.forward = fwd.backward;  // what runs now is the backward's collective
  b.backward.reset();
  if (fwd.backward_bytes >= 0) b.bytes = fwd.backward_bytes;
  b.backward_bytes = -1;
  // Gradients retrace the tokens' way back: dispatch's traffic pattern becomes combine's.
  b.weighting = fwd.weighting == WeightedAllToAll::kByReceiver ? WeightedAllToAll::kBySender
                                                               : WeightedAllToAll::kByReceiver;
  return b;
}

// Ring attention's backward circulates the key/value blocks and their gradients.
LayerStep backward_ring(const LayerStep& fwd) {
  LayerStep b = backward_kernel(fwd, ".bwd", fwd.input_grad_factor + fwd.weight_grad_factor, 1,
                                GemmPass::kBackward);
  b.bytes = 2 * fwd.bytes;
  return b;
}

}  // namespace

void derive_backward(BlockSteps* block) {
  block->backward.clear();
  block->backward_input.clear();
  block->backward_weight.clear();
  for (auto it = block->forward.rbegin(); it != block->forward.rend(); ++it) {
    const LayerStep& f = *it;
    if (f.kind == LayerStep::Kind::kRing) {
      block->backward.push_back(backward_ring(f));
      block->backward_input.push_back(backward_ring(f));
      continue;
    }
    if (f.kind == LayerStep::Kind::kCollective) {
      if (f.backward) {
        block->backward.push_back(backward_collective(f));
        block->backward_input.push_back(backward_collective(f));
      }
      continue;
    }
    const double total = f.input_grad_factor + f.weight_grad_factor;
    if (total == 0) continue;  // no gradient to compute: no kernel to launch
    const LayerStep fused = backward_kernel(f, ".bwd", total, 1, GemmPass::kBackward);
    block->backward.push_back(fused);
    if (f.weight_grad_factor > 0) {
      const auto [input, weight] = split_backward(fused);
      if (f.input_grad_factor > 0) block->backward_input.push_back(input);
      block->backward_weight.push_back(weight);
    } else {
      block->backward_input.push_back(fused);
    }
  }
}

std::pair<LayerStep, LayerStep> split_backward(const LayerStep& fused) {
  const double total = fused.input_grad_factor + fused.weight_grad_factor;
  std::string base = fused.name;
  if (base.ends_with(".bwd")) base.resize(base.size() - 4);
  // HBM traffic splits with the FLOPs: each half reads its operands once.
  LayerStep input = share_of(fused, fused.input_grad_factor / total);
  input.name = base + ".dgrad";
  input.shape.pass = GemmPass::kInputGrad;
  LayerStep weight = share_of(fused, fused.weight_grad_factor / total);
  weight.name = base + ".wgrad";
  weight.shape.pass = GemmPass::kWeightGrad;
  return {input, weight};
}

LayerStep share_of(const LayerStep& step, double share) {
  LayerStep part = step;
  part.flops *= share;
  part.hbm_bytes *= share;
  return part;
}

void open_tp_region(std::vector<LayerStep>& steps, const std::string& name, int tp,
                    bool sequence_parallel, double bytes) {
  if (tp <= 1) return;
  if (sequence_parallel) {
    steps.push_back(collective_step(name + ".in", CollectiveKind::kAllGather,
                                    CollectiveKind::kReduceScatter, CommDim::kTp, bytes));
  } else {
    steps.push_back(collective_step(name + ".in", std::nullopt, CollectiveKind::kAllReduce,
                                    CommDim::kTp, bytes));
  }
}

void close_tp_region(std::vector<LayerStep>& steps, const std::string& name, int tp,
                     bool sequence_parallel, double bytes) {
  if (tp <= 1) return;
  if (sequence_parallel) {
    steps.push_back(collective_step(name + ".out", CollectiveKind::kReduceScatter,
                                    CollectiveKind::kAllGather, CommDim::kTp, bytes));
  } else {
    steps.push_back(collective_step(name + ".out", CollectiveKind::kAllReduce, std::nullopt,
                                    CommDim::kTp, bytes));
  }
}

}  // namespace racksim
