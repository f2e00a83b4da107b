#include "workloads/model/mlp_ledger.h"

#include <algorithm>
#include <cmath>

namespace racksim {

namespace {

double matrices(bool gated) {
  return gated ? 3.0 : 2.0;
}

// One SwiGLU expert's weights.
double one_expert_params(const MlpSpec& s) {
  return matrices(true) * static_cast<double>(s.hidden * s.expert_ffn);
}

void append_dense(const std::string& name, double ffn, bool gated, double tokens, double hidden,
                  int tp, bool sequence_parallel, double e, std::vector<LayerStep>& fw) {
  const double f = ffn / tp;
  open_tp_region(fw, name, tp, sequence_parallel, tokens * hidden * e);
  LayerStep up = gemm_step(name + ".up", tokens, hidden, (gated ? 2 : 1) * f, e);
  LayerStep act = activation_step(name + ".act", gated, tokens * f, e);
  LayerStep down = gemm_step(name + ".down", tokens, f, hidden, e);
  up.fp8_input_fused = true;    // LayerNormMLP: the norm writes FP8
  down.fp8_input_fused = true;  // and so does the activation
  up.fp8_grad_fused = true;     // whose backward writes up's output gradient
  fw.push_back(up);
  fw.push_back(act);
  fw.push_back(down);
  close_tp_region(fw, name, tp, sequence_parallel, tokens * hidden * e);
}

// A residual add over `elements` as Megatron's bias-dropout-add runs it: it reads the sub-layer's
// output and the residual stream and writes their sum; its backward adds the gradients the two
// paths return to the stream (reads two, writes one). With hidden dropout the forward also writes
// a one-byte mask, and the backward multiplies the output gradient by it (reads both, writes
// one).
void append_residual(const std::string& name, bool dropout, double elements, double e,
                     std::vector<LayerStep>& fw) {
  const double forward_bytes = 3 * e + (dropout ? 1 : 0);
  const double backward_bytes = 3 * e + (dropout ? 2 * e + 1 : 0);
  const ElementwiseKernel add[] = {{"", dropout ? 3.0 : 1.0, forward_bytes, backward_bytes}};
  append_elementwise_kernels(name, add, elements, fw);
}

// An expert-parallel all-to-all whose traffic follows the experts' load, with its backward's
// buffer.
LayerStep expert_all_to_all(std::string name, WeightedAllToAll weighting, double bytes,
                            double backward_bytes) {
  LayerStep step = collective_step(std::move(name), CollectiveKind::kAllToAll,
                                   CollectiveKind::kAllToAll, CommDim::kEp, bytes);
  step.backward_bytes = backward_bytes;
  step.expert_weighted = true;
  step.weighting = weighting;
  return step;
}

// Routed (and shared) experts: router, permutation, dispatch, grouped GEMMs, combine.
void append_moe(const MlpSpec& spec, const MlpShape& shape, BlockSteps* block) {
  const double e = bytes_per_element(shape.dtype);
  const double h = static_cast<double>(spec.hidden);
  const double tokens = static_cast<double>(shape.tokens);
  auto& fw = block->forward;
  // Routed experts are not split by TP: with TP the tokens are (sequence-parallel) split first.
  const double moe_tokens = shape.tp > 1 ? tokens / shape.tp : tokens;
  const double routed = moe_tokens * static_cast<double>(spec.top_k);  // token copies sent out
  const double experts_local = static_cast<double>(spec.experts) / shape.ep;
  const double f = static_cast<double>(spec.expert_ffn);
  const double d = shape.dispatch_element_bytes > 0 ? shape.dispatch_element_bytes : e;
  LayerStep router = gemm_step("moe.router", moe_tokens, h, static_cast<double>(spec.experts), e);
  router.fp8_linear = false;  // the router's scores stay in high precision
  fw.push_back(router);
  fw.push_back(elementwise_step("moe.permute", 2 * routed * h, routed, e));
  if (shape.ep > 1) {
    // The tokens' gradients go back in the activation dtype.
    fw.push_back(expert_all_to_all("moe.dispatch", WeightedAllToAll::kByReceiver, routed * h * d,
                                   routed * h * e));
  }
  // The rank's experts as grouped GEMMs, one product per expert over the token copies it
  // received (training.expert_gemm: one grouped kernel or a kernel per expert on streams); their
  // weights are read once per micro-batch.
  // Fewer copies than experts (a tiny micro-batch): only the experts a copy reached run a GEMM.
  const double products = std::max(1.0, std::min(experts_local, std::floor(routed)));
  const double rows = routed / products;
  LayerStep up = gemm_step("moe.experts.up", routed, h, 2 * f, e);
  up.hbm_bytes = e * (routed * h + experts_local * h * 2 * f + routed * 2 * f);
  LayerStep act = activation_step("moe.experts.act", true, routed * f, e);
  LayerStep down = gemm_step("moe.experts.down", routed, f, h, e);
  down.hbm_bytes = e * (routed * f + experts_local * f * h + routed * h);
  for (LayerStep* s : {&up, &down}) {
    s->shape.m = static_cast<float>(rows);
    s->shape.batch = static_cast<float>(products);
    s->shape.streams = static_cast<float>(shape.expert_gemm_streams);
  }
  for (LayerStep* s : {&up, &act, &down}) {
    s->scales_with_expert_load = true;
    s->expert_params = s->op_class == OpClass::kGemm;
    s->weight_elements *= experts_local;
  }
  fw.push_back(up);
  fw.push_back(act);
  block->moe_activation_recompute.push_back(recompute_copy(act));
  fw.push_back(down);
  if (shape.ep > 1) {
    // The output gradients go towards the experts as the dispatch went.
    fw.push_back(expert_all_to_all("moe.combine", WeightedAllToAll::kBySender, routed * h * e,
                                   routed * h * d));
  }
  fw.push_back(elementwise_step("moe.unpermute", 2 * routed * h, 2 * routed * h, e));
  if (spec.shared > 0) {
    const size_t shared_first = fw.size();
    append_dense("moe.shared", static_cast<double>(spec.shared) * f, true, tokens, h, shape.tp,
                 shape.sequence_parallel, e, fw);
    append_recompute_copies(fw, shared_first, &block->shared_expert_recompute);
  }
}

}  // namespace

MlpSpec mlp_spec(const config::Model& model, int layer) {
  MlpSpec s;
  s.gated = model.activation() != config::Model::GELU;
  s.hidden = model.hidden_size();
  s.ffn = model.ffn_hidden_size();
  s.moe = model.num_experts() > 0 && layer >= model.first_dense_layers();
  s.dropout = model.hidden_dropout() > 0;
  if (s.moe) {
    s.experts = model.num_experts();
    s.top_k = model.experts_per_token();
    s.expert_ffn = model.moe_ffn_hidden_size();
    s.shared = model.num_shared_experts();
    s.gated = true;  // experts are SwiGLU
  }
  return s;
}

double mlp_params(const MlpSpec& s) {
  const double h = static_cast<double>(s.hidden);
  if (!s.moe) return matrices(s.gated) * h * static_cast<double>(s.ffn);
  const double router = h * static_cast<double>(s.experts);
  return static_cast<double>(s.experts + s.shared) * one_expert_params(s) + router;
}

double mlp_expert_params(const MlpSpec& s) {
  return s.moe ? static_cast<double>(s.experts) * one_expert_params(s) : 0;
}

double mlp_shared_expert_params(const MlpSpec& s) {
  return s.moe ? static_cast<double>(s.shared) * one_expert_params(s) : 0;
}

double mlp_active_params(const MlpSpec& s) {
  if (!s.moe) return mlp_params(s);
  return static_cast<double>(s.top_k + s.shared) * one_expert_params(s) +
         static_cast<double>(s.hidden * s.experts);
}

SavedActivations dense_mlp_saved_activations(const MlpSpec& s) {
  SavedActivations saved;
  saved.stream = static_cast<double>(s.hidden);
  saved.linear_stream = saved.stream;
  saved.heads = (s.gated ? 3 : 2) * static_cast<double>(s.ffn);
  saved.linear_heads =
      static_cast<double>(s.ffn);  // the activation's output, the down GEMM's input
  return saved;
}

// torchtitan's op-level policy on the MLP half of a layer: everything but the first matmul
// (SwiGLU's gate, GELU's first projection) and, under SwiGLU, the third (the down projection).
// `fw` ends with the attention's residual add, the norm, the dense MLP and its residual add.
void append_alternate_matmul_recompute(const MlpSpec& spec, double tokens, int tp, double e,
                                       const std::vector<LayerStep>& fw, BlockSteps* block) {
  auto& again = block->alternate_matmul_recompute;
  const auto copy_named = [&](const std::string& prefix) {
    for (const LayerStep& step : fw) {
      if (step.name.rfind(prefix, 0) == 0) again.push_back(recompute_copy(step));
    }
  };
  copy_named("attn.residual");
  copy_named("mlp.norm");
  const double h = static_cast<double>(spec.hidden);
  const double f = static_cast<double>(spec.ffn) / tp;
  if (spec.gated) again.push_back(recompute_copy(gemm_step("mlp.up", tokens, h, f, e)));
  copy_named("mlp.act");
  if (!spec.gated) copy_named("mlp.down");
  copy_named("mlp.residual");
}

void append_mlp(const MlpSpec& spec, const MlpShape& shape, BlockSteps* block) {
  const double e = bytes_per_element(shape.dtype);
  const double h = static_cast<double>(spec.hidden);
  const double tokens = static_cast<double>(shape.tokens);
  const double norm_tokens = shape.sequence_parallel ? tokens / shape.tp : tokens;
  auto& fw = block->forward;
  // The attention block's residual add, then the norm (reads one tensor, writes one).
  append_residual("attn.residual", spec.dropout, norm_tokens * h, e, fw);
  fw.push_back(norm_step("mlp.norm", norm_tokens * h, e));
  block->norm_recompute.push_back(recompute_copy(fw.back()));
  const size_t first = fw.size();
  if (spec.moe) {
    append_moe(spec, shape, block);
    append_recompute_copies(fw, first, &block->moe_recompute);
  } else {
    append_dense("mlp", static_cast<double>(spec.ffn), spec.gated, tokens, h, shape.tp,
                 shape.sequence_parallel, e, fw);
    append_recompute_copies(fw, first, &block->mlp_recompute);
  }
  append_residual("mlp.residual", spec.dropout, norm_tokens * h, e, fw);
  if (!spec.moe) append_alternate_matmul_recompute(spec, tokens, shape.tp, e, fw, block);
}

}  // namespace racksim
