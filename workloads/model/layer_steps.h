// The steps of one block of the model (a transformer layer, the embedding, the output head) for
// one micro-batch on one rank, and how the backward is derived from the forward.
//
// A block's forward is a list of steps: compute kernels (FLOPs and HBM bytes) and collectives
// over a parallel group (TP, EP, CP). The backward walks the forward in reverse: each kernel
// becomes its backward kernel(s), each collective the collective its forward's gradient needs
// (Megatron's conjugates: an all-reduce in the forward is the identity backward and vice versa;
// an all-gather becomes a reduce-scatter and back; an all-to-all stays an all-to-all).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "graph/event_graph.h"

namespace racksim {

struct LayerStep {
  // kRing: a compute kernel cut into ring_hops + 1 slices; between slices, each rank sends a
  // block of `bytes` to its next neighbour of dimension `dim` and receives one from the previous
  // (ring attention: the KV blocks circulate while the kernel works on the ones it has).
  enum class Kind : uint8_t { kCompute, kCollective, kRing };
  Kind kind = Kind::kCompute;
  std::string name;
  // compute
  OpClass op_class = OpClass::kOther;
  double flops = 0;
  double hbm_bytes = 0;
  // Backward kernels: input gradient (B) and weight gradient (W) FLOPs as multiples of the
  // forward's, and HBM bytes as a multiple of the forward's. GEMM: 1 and 1 (dgrad, wgrad);
  // attention: 2.5 and 0 (FlashAttention-2: five matmuls against two); element-wise: 1 and 0.
  double input_grad_factor = 1;
  double weight_grad_factor = 0;
  double backward_bytes_factor = 2;
  // GEMMs: the forward product's shape (the backward steps carry their pass); the kernel
  // compute model times the GEMM from it.
  KernelShape shape;
  // A linear layer's GEMM (activations x weights, gemm_step): FP8 training runs it in FP8, with
  // Transformer Engine's casts of its operands (training/rank_writer.h). False for the other
  // GEMMs, which Megatron-Core keeps in BF16 under FP8: attention's score and context products,
  // the output layer (not a Transformer Engine module) and the MoE router.
  bool fp8_linear = false;
  // Its FP8 input comes from the kernel before it (Transformer Engine's LayerNormLinear and
  // LayerNormMLP write the norm's and the activation's output in FP8): only the transposed copy
  // for the weight gradient is left to write.
  bool fp8_input_fused = false;
  // Its output gradient comes from a kernel that finds the amax as it writes it (the activation's
  // backward in LayerNormMLP), so current scaling needs no pass of its own before that cast.
  bool fp8_grad_fused = false;
  // A linear layer's weight elements on this rank (all its local experts' for grouped expert
  // GEMMs), or an embedding table's rows on it: what the weight gradient accumulates into across
  // micro-batches. 0: no weights. (A table tied to an output layer on the same rank adds into
  // the gradient that layer stored, from the first micro-batch under autograd; racksim times
  // each as a weight of its own.)
  double weight_elements = 0;
  // collective (`forward` / `backward` absent: nothing in that direction)
  std::optional<CollectiveKind> forward;
  std::optional<CollectiveKind> backward;
  CommDim dim = CommDim::kOther;
  double bytes = 0;            // buffer size (nccl-tests convention); kRing: bytes per hop
  double backward_bytes = -1;  // the backward collective's buffer when it differs (< 0: bytes)
  int ring_hops = 0;
  // MoE: an all-to-all whose traffic follows the experts' load (forward: dispatch is
  // kByReceiver, combine kBySender; the backward flips them), and expert kernels whose work
  // scales with the tokens the rank's experts received.
  bool expert_weighted = false;
  WeightedAllToAll weighting = WeightedAllToAll::kByReceiver;
  bool scales_with_expert_load = false;
  bool expert_params = false;  // the step's weights are experts (reduced over expert replicas)
  // One of the output layer's steps (its norm, TP region, GEMM and loss; for each call,
  // its own and each multi-token prediction module's): what defer_embedding_wgrad moves.
  bool output_layer = false;
};

struct BlockSteps {
  std::vector<LayerStep> forward;
  std::vector<LayerStep> backward;         // full backward: B and W kernels fused
  std::vector<LayerStep> backward_input;   // B only (zero-bubble schedules)
  std::vector<LayerStep> backward_weight;  // W only
  // What selective recompute runs again: the attention's core, until the training step chooses
  // the modules training.recompute_modules lists (training_step.cpp).
  std::vector<LayerStep> selective_recompute;
  // What training.recompute_modules can add to it: the layer's norms (LAYERNORM), the
  // multi-latent attention's up-projections and rotary embedding (MLA_UP_PROJ), the experts'
  // activation (MOE_ACT), a dense MLP (MLP), an MoE block (MOE) and its shared experts
  // (SHARED_EXPERTS), each step named with ".recompute" appended.
  std::vector<LayerStep> norm_recompute;
  std::vector<LayerStep> up_projection_recompute;
  std::vector<LayerStep> moe_activation_recompute;
  std::vector<LayerStep> mlp_recompute;
  std::vector<LayerStep> moe_recompute;
  std::vector<LayerStep> shared_expert_recompute;
  // What torchtitan's op-level policy runs again (ALTERNATE_MATMULS): every kernel of a layer of
  // full attention and a dense MLP but the attention's core and the first, third, ... matrix
  // multiply (query, value, gate projections; GELU's first).
  std::vector<LayerStep> alternate_matmul_recompute;
};

// What a block keeps for its backward, in elements per token of the micro-batch on one rank
// before tensor parallelism, sorted by how tensor (t) and sequence parallelism divide them. The
// memory ledger (training/memory_ledger.h) turns them into bytes.
struct SavedActivations {
  double stream = 0;  // on the hidden stream (a projection's input): whole, or / t under SP
  double heads = 0;   // split over TP ranks by heads or columns: / t
  double latent = 0;  // whole on every TP rank with or without SP (MLA's latents)
  // Of `heads`: the up-projections' outputs, which recompute of MLA_UP_PROJ does not keep.
  double up_projection = 0;
  // Of stream, heads and latent: linear layers' inputs and nothing else's, which FP8 training can
  // keep as the FP8 cast its weight gradient reads.
  double linear_stream = 0;
  double linear_heads = 0;
  double linear_latent = 0;
  // Per-head elements FP8 training keeps twice, once in 16-bit for another kernel and once as a
  // linear layer's FP8 input (the attention's output); in 16-bit training one tensor serves both.
  double fp8_copies = 0;
};

// A forward step as recompute runs it again: the same kernel under its name + ".recompute".
LayerStep recompute_copy(LayerStep step);
// Appends recompute copies of `steps` from index `first` on to `out`.
void append_recompute_copies(const std::vector<LayerStep>& steps, size_t first,
                             std::vector<LayerStep>* out);

// Bytes of an FP32 element (the loss's logits, master weights).
inline constexpr double kFp32Bytes = 4;

LayerStep compute_step(std::string name, OpClass op_class, double flops, double hbm_bytes);
// C[m,n] = A[m,k] B[k,n]: 2mkn FLOPs; reads A and B and writes C once.
LayerStep gemm_step(std::string name, double m, double k, double n, double elem_bytes);
// `batch` independent products C[m,n] = A[m,k] B[k,n] in one kernel (attention's QK^T and AV
// when the scores are materialized): 2mkn x batch FLOPs; reads A and B and writes C once each.
LayerStep batched_gemm_step(std::string name, double batch, double m, double k, double n,
                            double elem_bytes);
LayerStep elementwise_step(std::string name, double elements_touched, double flops,
                           double elem_bytes);
LayerStep attention_step(std::string name, double flops, double hbm_bytes);
// A LayerNorm or RMSNorm over `elements` (tokens x hidden): reads them and writes them once, about
// 8 FLOPs each (mean, variance, scale, shift).
LayerStep norm_step(std::string name, double elements, double elem_bytes);
// The activation between an MLP's two GEMMs over `outputs` elements of its result: gated (SwiGLU)
// reads the gate and up halves and writes their product; GELU reads one tensor and writes one.
// About 8 FLOPs an output.
LayerStep activation_step(std::string name, bool gated, double outputs, double elem_bytes);

// One of a sequence of element-wise kernels over the same elements, per element: its FLOPs, the
// HBM bytes it moves, and those its backward kernel moves (0: its backward launches none).
struct ElementwiseKernel {
  const char* suffix;  // after the sequence's name ("" for the kernel that carries the name)
  double flops;
  double forward_bytes;
  double backward_bytes;
};
// Appends each kernel over `elements` as a step named `name` + its suffix.
void append_elementwise_kernels(const std::string& name, std::span<const ElementwiseKernel> kernels,
                                double elements, std::vector<LayerStep>& steps);
LayerStep collective_step(std::string name, std::optional<CollectiveKind> forward,
                          std::optional<CollectiveKind> backward, CommDim dim, double bytes);

// Fills backward, backward_input and backward_weight from forward.
void derive_backward(BlockSteps* block);

// A fused backward kernel (`name.bwd`, input and weight gradients in one step) as its
// input-gradient (`name.dgrad`) and weight-gradient (`name.wgrad`) halves, each with its share
// of the FLOPs and bytes: what derive_backward puts in backward_input and backward_weight.
std::pair<LayerStep, LayerStep> split_backward(const LayerStep& fused);

// `step` with `share` of its FLOPs and HBM bytes (a slice or chunk of a kernel). A GEMM keeps its
// whole shape, so the compute model gives the piece its share of the whole GEMM's time.
LayerStep share_of(const LayerStep& step, double share);

// The collectives that open and close a tensor-parallel region (Megatron's f and g): without
// sequence parallelism, nothing opens it and an all-reduce closes it (whose backward is an
// all-reduce at the opening); with it, an all-gather opens and a reduce-scatter closes.
// Nothing at all when tp == 1.
void open_tp_region(std::vector<LayerStep>& steps, const std::string& name, int tp,
                    bool sequence_parallel, double bytes);
void close_tp_region(std::vector<LayerStep>& steps, const std::string& name, int tp,
                     bool sequence_parallel, double bytes);

}  // namespace racksim
