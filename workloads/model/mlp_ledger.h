// The feed-forward block of one layer: a dense MLP, or a mixture of experts with expert
// parallelism (router, dispatch all-to-all, the rank's experts, combine all-to-all, shared
// experts).
#pragma once

#include <cstdint>

#include "proto/scenario.pb.h"
#include "workloads/model/layer_steps.h"

namespace racksim {

struct MlpSpec {
  bool moe = false;
  bool gated = true;
  int64_t hidden = 0;
  int64_t ffn = 0;      // dense MLP
  int64_t experts = 0;  // routed experts
  int64_t top_k = 0;
  int64_t expert_ffn = 0;
  int64_t shared = 0;  // shared experts, each of expert_ffn
  // Hidden dropout before the residual adds (model.hidden_dropout > 0): the attention block's
  // residual add, which this block's steps open with, and its own.
  bool dropout = false;
};

MlpSpec mlp_spec(const config::Model& model, int layer);

double mlp_params(const MlpSpec& spec);                // all of the block's parameters
double mlp_expert_params(const MlpSpec& spec);         // of which routed experts (sharded over EP)
double mlp_shared_expert_params(const MlpSpec& spec);  // of which shared experts
double mlp_active_params(const MlpSpec& spec);         // in a matrix multiply per token

// What a dense MLP keeps for its backward, per token: its input (the norm's output) on the
// stream; the activation's input (gate and up halves when gated) and output, split by columns.
// Not for an MoE block, whose kept tensors follow its routed copies (the memory ledger's).
SavedActivations dense_mlp_saved_activations(const MlpSpec& spec);

struct MlpShape {
  int64_t tokens = 0;  // tokens of the micro-batch on this rank (after the CP split)
  int tp = 1;
  bool sequence_parallel = false;
  int ep = 1;
  DataType dtype = DataType::kBf16;
  double dispatch_element_bytes = 0;  // the all-to-alls towards the experts; 0: dtype's
  // The streams a kernel per expert is issued on (training.expert_gemm PER_EXPERT_STREAMS);
  // 0: one grouped kernel per projection.
  int expert_gemm_streams = 0;
};

// Appends the block's forward steps. Expert kernels are written for a balanced load (every
// rank's experts receive tokens x top_k tokens); they are marked so the generator can scale
// them by the rank's actual load, and the all-to-alls so it can weight them.
void append_mlp(const MlpSpec& spec, const MlpShape& shape, BlockSteps* block);

}  // namespace racksim
