// The model ledger and the training-step generator against hand-computed figures.
#include <gtest/gtest.h>

#include <google/protobuf/text_format.h>

#include <map>

#include "graph/graph_check.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer.h"
#include "workloads/training/layout.h"
#include "workloads/training/memory_ledger.h"
#include "workloads/training/pipeline_schedule.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

config::Model gpt3() {
  config::Model m;
  m.set_hidden_size(12288);
  m.set_num_layers(96);
  m.set_num_heads(96);
  m.set_num_kv_heads(96);
  m.set_ffn_hidden_size(49152);
  m.set_vocab_size(51200);
  m.set_activation(config::Model::GELU);
  m.set_tie_embeddings(true);
  return m;
}

TEST(TransformerModel, Gpt3ParametersAndFlopsPerToken) {
  const TransformerModel model(gpt3());
  const double h = 12288, layers = 96, vocab = 51200, seq = 2048;
  // 4h^2 for the attention projections, 8h^2 for the 4h MLP, 2h for the norms.
  const double layer = 12 * h * h + 2 * h;
  EXPECT_DOUBLE_EQ(model.layer_params(0), layer);
  EXPECT_DOUBLE_EQ(model.total_params(), layers * layer + vocab * h + h);
  const double n = layers * 12 * h * h + vocab * h;  // matmul weights incl. the LM head
  EXPECT_DOUBLE_EQ(model.active_params(), n);
  EXPECT_NEAR(model.total_params() / 1e9, 174.6, 0.1);  // "175B"
  // a = 12 x layers x hidden (QK^T and AV, forward and backward), no causal halving.
  EXPECT_DOUBLE_EQ(model.attention_coeff(false), 12 * layers * h);
  EXPECT_DOUBLE_EQ(model.model_flops_per_token(2048, false), 6 * n + 12 * layers * h * seq);
  EXPECT_DOUBLE_EQ(model.model_flops_per_token(2048, true), 6 * n + 6 * layers * h * seq);
}

TEST(TransformerModel, PresetsMatchPublishedSizes) {
  const std::map<std::string, double> billions = {
      {"llama3-8b", 8.03}, {"llama3-70b", 70.55}, {"llama3-405b", 405.85}, {"gpt3-175b", 174.6}};
  for (const auto& [name, expected] : billions) {
    const auto preset = model_preset(name);
    ASSERT_TRUE(preset.has_value()) << name;
    EXPECT_NEAR(TransformerModel(*preset).total_params() / 1e9, expected, 0.01 * expected) << name;
  }
}

TEST(TransformerModel, LayerStepFlopsAddUpToSixN) {
  // Forward GEMM FLOPs of one layer for T tokens are 2 T x (layer matmul weights) / tp; the
  // attention core adds 4 T s (heads x head_dim) / tp halved by the causal mask.
  const TransformerModel model(gpt3());
  RankShape shape{1, 2048, 8, false, DataType::kBf16};
  const BlockSteps steps = model.layer_steps(0, shape);
  double gemm = 0, attention = 0, backward_gemm = 0, dgrad = 0, wgrad = 0;
  int collectives = 0, backward_collectives = 0;
  for (const auto& s : steps.forward) {
    if (s.kind == LayerStep::Kind::kCollective && s.forward) ++collectives;
    if (s.op_class == OpClass::kGemm) gemm += s.flops;
    if (s.op_class == OpClass::kAttention) attention += s.flops;
  }
  for (const auto& s : steps.backward) {
    if (s.op_class == OpClass::kGemm) backward_gemm += s.flops;
    if (s.kind == LayerStep::Kind::kCollective) ++backward_collectives;
  }
  for (const auto& s : steps.backward_input) {
    if (s.op_class == OpClass::kGemm) dgrad += s.flops;
  }
  for (const auto& s : steps.backward_weight) {
    EXPECT_EQ(s.kind, LayerStep::Kind::kCompute) << "W passes do not communicate";
    wgrad += s.flops;
  }
  const double h = 12288, tokens = 2048;
  EXPECT_DOUBLE_EQ(gemm, 2 * tokens * 12 * h * h / 8);
  EXPECT_DOUBLE_EQ(attention, 4 * tokens * 2048 * h / 8 / 2);
  EXPECT_DOUBLE_EQ(backward_gemm, 2 * gemm);
  EXPECT_EQ(collectives, 2);           // Megatron: two all-reduces per layer forward
  EXPECT_EQ(backward_collectives, 2);  // and two backward
  EXPECT_DOUBLE_EQ(dgrad, gemm);       // the zero-bubble split: B = input gradients
  EXPECT_DOUBLE_EQ(wgrad, gemm);       // W = weight gradients
}

// The output layer's steps carry their own flag (what defer_embedding_wgrad moves): the norm, the
// TP region, the GEMM and the loss of each call, the model's own and each multi-token prediction
// module's, and nothing of the modules' projection and layer.
TEST(TransformerModel, OutputLayerStepsAreFlaggedForEveryCall) {
  config::Model m = gpt3();
  m.set_mtp_depth(1);
  const TransformerModel model(m);
  RankShape shape{1, 2048, 4, true, DataType::kBf16};
  const BlockSteps head = model.head_steps(shape);
  auto is_output = [](const LayerStep& s) {
    return s.name.starts_with("lm_head") || s.name.starts_with("mtp.head");
  };
  int flagged = 0, gemms = 0;
  for (const auto& s : head.forward) {
    EXPECT_EQ(s.output_layer, is_output(s)) << s.name;
    flagged += s.output_layer;
  }
  for (const auto& s : head.backward_weight) {
    if (!s.output_layer) continue;
    EXPECT_EQ(s.op_class, OpClass::kGemm) << s.name;
    ++gemms;
  }
  EXPECT_GE(flagged, 8);  // two calls of norm, gather, GEMM, loss, loss all-reduce at least
  EXPECT_EQ(gemms, 2);    // the two calls' weight-gradient GEMMs
  EXPECT_LT(flagged, static_cast<int>(head.forward.size()));  // the module's layer is not
}

// The loss's kernels and their HBM traffic per FP16 logit (training.cross_entropy): fused, one
// kernel each way (12 and 6 B); Megatron-LM's unfused FP32 cross-entropy, six forward kernels
// (cast 2 + 4, max 4, subtract 8, exp 8, sum 4, divide 8: 38 B) and two backward (the in-place
// multiply, 8, and the cast back, 4 + 2: 14 B).
TEST(TransformerModel, CrossEntropyBytesPerLogit) {
  const TransformerModel model(gpt3());
  struct Loss {
    int forward_kernels = 0, backward_kernels = 0;
    double forward_bytes = 0, backward_bytes = 0;
  };
  auto loss = [&](bool unfused) {
    RankShape shape{2, 2048, 4, false, DataType::kFp16};
    shape.unfused_cross_entropy = unfused;
    const BlockSteps head = model.head_steps(shape);
    Loss l;
    auto is_loss_kernel = [](const LayerStep& s) {
      return s.kind == LayerStep::Kind::kCompute && s.name.rfind("lm_head.loss", 0) == 0;
    };
    for (const auto& s : head.forward) {
      if (!is_loss_kernel(s)) continue;
      ++l.forward_kernels;
      l.forward_bytes += s.hbm_bytes;
    }
    for (const auto& s : head.backward) {
      if (!is_loss_kernel(s)) continue;
      ++l.backward_kernels;
      l.backward_bytes += s.hbm_bytes;
    }
    return l;
  };
  const double logits = 2.0 * 2048 * 51200 / 4;
  const Loss fused = loss(false);
  EXPECT_EQ(fused.forward_kernels, 1);
  EXPECT_EQ(fused.backward_kernels, 1);
  EXPECT_DOUBLE_EQ(fused.forward_bytes, 12 * logits);
  EXPECT_DOUBLE_EQ(fused.backward_bytes, 6 * logits);
  const Loss unfused = loss(true);
  EXPECT_EQ(unfused.forward_kernels, 6);
  EXPECT_EQ(unfused.backward_kernels, 2);
  EXPECT_DOUBLE_EQ(unfused.forward_bytes, 38 * logits);
  EXPECT_DOUBLE_EQ(unfused.backward_bytes, 14 * logits);
}

TEST(TransformerModel, SequenceParallelSwapsAllReduceForGatherAndScatter) {
  const TransformerModel model(gpt3());
  const BlockSteps steps = model.layer_steps(0, RankShape{1, 2048, 8, true, DataType::kBf16});
  std::vector<CollectiveKind> forward, backward;
  for (const auto& s : steps.forward) {
    if (s.forward) forward.push_back(*s.forward);
  }
  for (const auto& s : steps.backward) {
    if (s.forward) backward.push_back(*s.forward);
  }
  using K = CollectiveKind;
  EXPECT_EQ(forward,
            (std::vector<K>{K::kAllGather, K::kReduceScatter, K::kAllGather, K::kReduceScatter}));
  EXPECT_EQ(backward,
            (std::vector<K>{K::kAllGather, K::kReduceScatter, K::kAllGather, K::kReduceScatter}));
}

// A layer's element-wise kernels around its two sub-layers, by hand for GPT-3 at TP8 with
// sequence parallelism (2,048 tokens, 256 a rank, BF16): the pre-attention norm, the attention's
// residual add, the pre-MLP norm and the MLP's residual add. A residual add reads two tensors and
// writes one, and its backward sums the gradients of the two paths (the same bytes); with hidden
// dropout it also writes a one-byte mask, and its backward multiplies by it (2 + 1 + 2 bytes).
TEST(TransformerModel, EachSubLayerEndsInAResidualAddThatCarriesTheDropoutMask) {
  for (const double dropout : {0.0, 0.1}) {
    config::Model m = gpt3();
    m.set_hidden_dropout(dropout);
    const TransformerModel model(m);
    const BlockSteps steps = model.layer_steps(0, RankShape{1, 2048, 8, true, DataType::kBf16});
    std::vector<std::string> elementwise;
    std::map<std::string, double> forward_bytes, backward_bytes;
    for (const auto& s : steps.forward) {
      if (s.op_class == OpClass::kElementwise && s.name.find(".act") == std::string::npos) {
        elementwise.push_back(s.name);
      }
      forward_bytes[s.name] = s.hbm_bytes;
    }
    for (const auto& s : steps.backward) backward_bytes[s.name] = s.hbm_bytes;
    EXPECT_EQ(elementwise,
              (std::vector<std::string>{"attn.norm", "attn.residual", "mlp.norm", "mlp.residual"}));
    const double elements = 256.0 * 12288, mask = dropout > 0 ? 1 : 0;
    for (const std::string add : {"attn.residual", "mlp.residual"}) {
      EXPECT_DOUBLE_EQ(forward_bytes[add], elements * (3 * 2 + mask)) << add << dropout;
      EXPECT_DOUBLE_EQ(backward_bytes[add + ".bwd"], elements * (3 * 2 + mask * (2 * 2 + 1)))
          << add << dropout;
    }
    EXPECT_DOUBLE_EQ(forward_bytes["mlp.norm"], elements * 2 * 2);
  }
}

// Ring attention's kernels besides attention, as Transformer Engine runs them (attention_ledger's
// ring_pack_and_merge), by hand for a GQA model: 64 heads of 128, 8 KV heads, TP4, micro-batch 1
// of 8,192 tokens over CP ranks (T = 8192 / cp local tokens, BF16). Per local token: out and dq
// 16 x 128 = 2,048 elements, k and v 2 x 2 x 128 = 512, the LSE 16 x 4 B. With L = 0.75 (cp - 1)
// blocks merged after the first: pack 2 x 512 x 2 B each way; merge forward (2 x 2048 x 2 + 2 x
// 64) + L (3 x 2048 x 2 + 2 x 64) + (2 x 64 + L x 3 x 64); backward (2 + 3 L) x (2048 + 512) x 2.
TEST(TransformerModel, RingAttentionPacksAndMergesItsBlocks) {
  config::Model m = gpt3();
  m.set_hidden_size(8192);
  m.set_num_heads(64);
  m.set_num_kv_heads(8);
  const TransformerModel model(m);
  for (const int cp : {2, 4}) {
    RankShape shape{1, 8192, 4, true, DataType::kBf16};
    shape.cp = cp;
    const BlockSteps steps = model.layer_steps(0, shape);
    std::vector<std::string> core;
    std::map<std::string, double> forward_bytes, backward_bytes;
    for (const auto& s : steps.forward) {
      if (s.name.rfind("attn.c", 0) == 0) core.push_back(s.name);
      forward_bytes[s.name] = s.hbm_bytes;
    }
    for (const auto& s : steps.backward) backward_bytes[s.name] = s.hbm_bytes;
    EXPECT_EQ(core, (std::vector<std::string>{"attn.cp.pack", "attn.core", "attn.cp.merge"}));
    const double tokens = 8192.0 / cp, later = 0.75 * (cp - 1);
    EXPECT_DOUBLE_EQ(forward_bytes["attn.cp.pack"], tokens * 2 * 512 * 2);
    EXPECT_DOUBLE_EQ(backward_bytes["attn.cp.pack.bwd"], tokens * 2 * 512 * 2);
    EXPECT_DOUBLE_EQ(forward_bytes["attn.cp.merge"],
                     tokens * ((2 * 2048 * 2 + 2 * 64) + later * (3 * 2048 * 2 + 2 * 64) +
                               (2 * 64 + later * 3 * 64)));
    EXPECT_DOUBLE_EQ(backward_bytes["attn.cp.merge.bwd"],
                     tokens * (2 + 3 * later) * (2048 + 512) * 2);
  }
  // Without CP there is no ring and nothing to merge.
  const BlockSteps plain = model.layer_steps(0, RankShape{1, 8192, 4, true, DataType::kBf16});
  for (const auto& s : plain.forward) EXPECT_EQ(s.name.rfind("attn.cp", 0), std::string::npos);
}

TEST(PipelineSchedule, OneFOneBWarmupAndOrder) {
  const auto order = one_f_one_b_order(/*stage=*/1, /*stages=*/4, /*micro_batches=*/6);
  ASSERT_EQ(order.size(), 12u);
  // stage 1 of 4 runs 2 warm-up forwards, then alternates.
  const std::vector<std::pair<PassKind, int>> expected = {
      {PassKind::kForward, 0},  {PassKind::kForward, 1},  {PassKind::kForward, 2},
      {PassKind::kBackward, 0}, {PassKind::kForward, 3},  {PassKind::kBackward, 1},
      {PassKind::kForward, 4},  {PassKind::kBackward, 2}, {PassKind::kForward, 5},
      {PassKind::kBackward, 3}, {PassKind::kBackward, 4}, {PassKind::kBackward, 5}};
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i].kind, expected[i].first) << i;
    EXPECT_EQ(order[i].micro_batch, expected[i].second) << i;
  }
  // The last stage has no warm-up: F0 B0 F1 B1 ...
  const auto last = one_f_one_b_order(3, 4, 2);
  EXPECT_EQ(last[0].kind, PassKind::kForward);
  EXPECT_EQ(last[1].kind, PassKind::kBackward);
}

TEST(ParallelLayout, RanksRoundTripAndGroups) {
  const ParallelLayout layout(4, 1, 2, 3);
  for (RankId r = 0; r < layout.num_ranks(); ++r) EXPECT_EQ(layout.rank(layout.coords(r)), r);
  EXPECT_EQ(layout.tp_group(5), (std::vector<RankId>{4, 5, 6, 7}));
  EXPECT_EQ(layout.dp_group(1), (std::vector<RankId>{1, 5}));
  EXPECT_EQ(layout.pp_group(1), (std::vector<RankId>{1, 9, 17}));
}

config::Scenario small_scenario(int tp, int pp, int dp, config::Training::Recompute recompute) {
  config::Scenario s;
  *s.mutable_model() = *model_preset("llama3-8b");
  s.mutable_model()->set_num_layers(4);
  auto* l = s.mutable_layout();
  l->set_tp(tp);
  l->set_pp(pp);
  l->set_dp(dp);
  l->set_cp(1);
  auto* t = s.mutable_training();
  t->set_global_batch_size(4 * dp);
  t->set_micro_batch_size(1);
  t->set_seq_length(1024);
  t->set_recompute(recompute);
  t->set_schedule(config::Training::ONE_F_ONE_B);
  t->set_dtype(config::BF16);
  t->set_grad_reduce_dtype(config::FP32);
  s.mutable_hardware()->mutable_gpu()->set_hbm_bytes(80e9);
  return s;
}

TEST(TrainingStep, GraphIsWellFormedAndCountsMatch) {
  const auto scenario = small_scenario(2, 2, 2, config::Training::NONE);
  const TrainingPlan plan = resolve_training_plan(scenario);
  const TrainingStep step = build_training_step(plan);
  EXPECT_EQ(step.graph.num_ranks(), 8u);
  EXPECT_EQ(plan.micro_batches, 4);
  EXPECT_NO_THROW(match_sends_to_recvs(step.graph));
  EXPECT_NO_THROW(check_collectives(step.graph));
  // Per rank: 2 layers x 4 micro-batches x (2 TP all-reduces forward + 2 backward), plus the
  // embedding / head collectives, plus one DP all-reduce.
  std::map<CommDim, int> collectives_rank0;
  int sends_rank0 = 0;
  for (const Op& op : step.graph.ops()) {
    if (op.rank != 0) continue;
    if (op.kind == OpKind::kCollective) ++collectives_rank0[op.dim];
    if (op.kind == OpKind::kSend) ++sends_rank0;
  }
  EXPECT_EQ(collectives_rank0[CommDim::kTp], 2 * 4 * 4 + 4);  // + embedding all-reduce per mb
  EXPECT_EQ(collectives_rank0[CommDim::kDp], 1);
  EXPECT_EQ(sends_rank0, 4);  // one activation per micro-batch to stage 1
}

TEST(TrainingStep, FullRecomputeRepeatsTheForward) {
  const auto none =
      build_training_step(resolve_training_plan(small_scenario(1, 1, 1, config::Training::NONE)));
  const auto full =
      build_training_step(resolve_training_plan(small_scenario(1, 1, 1, config::Training::FULL)));
  double forward = 0, recompute = 0;
  for (const Op& op : full.graph.ops()) {
    if (op.kind != OpKind::kCompute || op.layer < 0) continue;
    if (op.phase == Phase::kForward) forward += op.amount;
    if (op.phase == Phase::kRecompute) recompute += op.amount;
  }
  EXPECT_GT(forward, 0);
  EXPECT_DOUBLE_EQ(recompute, forward);
  EXPECT_GT(full.graph.size(), none.graph.size());
}

}  // namespace
}  // namespace racksim
