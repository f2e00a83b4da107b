// The rotary position embedding's kernels (model.position_encoding ROTARY, training.rotary_impl)
// against their bytes worked by hand, and what each recompute mode runs again.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "workloads/model/model_presets.h"
#include "workloads/model/transformer.h"

namespace racksim {
namespace {

// The steps of `steps` whose name starts with `prefix`.
std::vector<LayerStep> named(const std::vector<LayerStep>& steps, const std::string& prefix) {
  std::vector<LayerStep> out;
  std::copy_if(steps.begin(), steps.end(), std::back_inserter(out),
               [&](const LayerStep& s) { return s.name.rfind(prefix, 0) == 0; });
  return out;
}

double total_bytes(const std::vector<LayerStep>& steps) {
  double sum = 0;
  for (const LayerStep& s : steps) sum += s.hbm_bytes;
  return sum;
}

RankShape llama_shape(int tp) {
  RankShape shape{2, 4096, tp, false, DataType::kBf16};
  return shape;
}

TEST(RotaryEmbedding, FusedKernelReadsAndWritesTheQueriesAndKeysOnce) {
  // Llama 3 8B: 32 query heads and 8 KV heads of 128; 2 x 4096 tokens, TP 2, BF16.
  const TransformerModel model(*model_preset("llama3-8b"));
  const BlockSteps steps = model.layer_steps(0, llama_shape(2));
  const double tokens = 2 * 4096, e = 2;
  const auto q = named(steps.forward, "attn.rope.q");
  const auto k = named(steps.forward, "attn.rope.k");
  ASSERT_EQ(q.size(), 1u);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_DOUBLE_EQ(q[0].hbm_bytes, 2 * e * tokens * 16 * 128);
  EXPECT_DOUBLE_EQ(k[0].hbm_bytes, 2 * e * tokens * 4 * 128);
  EXPECT_DOUBLE_EQ(q[0].flops, 3 * tokens * 16 * 128);
  // Between the projections and the attention kernel; the backward moves the same bytes again.
  const auto at = [&](const std::string& name) {
    return std::find_if(steps.forward.begin(), steps.forward.end(),
                        [&](const LayerStep& s) { return s.name == name; }) -
           steps.forward.begin();
  };
  EXPECT_LT(at("attn.qkv"), at("attn.rope.q"));
  EXPECT_LT(at("attn.rope.k"), at("attn.core"));
  const auto back = named(steps.backward, "attn.rope.");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_DOUBLE_EQ(total_bytes(back), 2 * e * tokens * (16 + 4) * 128);
}

TEST(RotaryEmbedding, ComplexFp32IsThreeEagerKernelsOfTwentyBytesAnElement) {
  RankShape shape = llama_shape(1);
  shape.rotary_complex_fp32 = true;
  const TransformerModel model(*model_preset("llama3-8b"));
  const BlockSteps steps = model.layer_steps(0, shape);
  const double elements = 2 * 4096 * (32 + 8) * 128;
  const auto fw = named(steps.forward, "attn.rope.");
  ASSERT_EQ(fw.size(), 6u);  // cast up, multiply, cast back; for the queries and the keys
  // (2 + 4) + (4 + 4) + (4 + 2) bytes an element, forward and backward alike.
  EXPECT_DOUBLE_EQ(total_bytes(fw), 20 * elements);
  EXPECT_DOUBLE_EQ(total_bytes(named(steps.backward, "attn.rope.")), 20 * elements);
}

TEST(RotaryEmbedding, LatentAttentionRotatesOnlyItsRopeDimensions) {
  // DeepSeek-V3: 128 heads with a 64-wide RoPE part each, one shared 64-wide RoPE key.
  const TransformerModel model(*model_preset("deepseek-v3"));
  const BlockSteps steps = model.layer_steps(0, RankShape{1, 4096, 4, true, DataType::kBf16});
  const double tokens = 4096, e = 2;
  EXPECT_DOUBLE_EQ(total_bytes(named(steps.forward, "attn.rope.q")),
                   2 * e * tokens * (128 / 4) * 64);
  EXPECT_DOUBLE_EQ(total_bytes(named(steps.forward, "attn.rope.k")), 2 * e * tokens * 64);
  // Megatron-Core's MLA_UP_PROJ recompute runs the up-projections and the rotation again.
  const auto again = named(steps.up_projection_recompute, "attn.rope.");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[1].name, "attn.rope.k.recompute");
}

TEST(RotaryEmbedding, OtherEncodingsTimeNoKernel) {
  for (const auto encoding : {config::Model::LEARNED_ABSOLUTE, config::Model::ALIBI,
                              config::Model::POSITION_ENCODING_UNSPECIFIED}) {
    config::Model llama = *model_preset("llama3-8b");
    llama.set_position_encoding(encoding);
    const BlockSteps steps = TransformerModel(llama).layer_steps(0, llama_shape(1));
    EXPECT_TRUE(named(steps.forward, "attn.rope").empty()) << encoding;
    EXPECT_TRUE(named(steps.backward, "attn.rope").empty()) << encoding;
  }
  const TransformerModel gpt(*model_preset("gpt3-175b"));
  EXPECT_TRUE(named(gpt.layer_steps(0, llama_shape(8)).forward, "attn.rope").empty());
}

TEST(RotaryEmbedding, TheOpPolicyRunsItAgainAndCoreRecomputeDoesNot) {
  const TransformerModel model(*model_preset("llama3-8b"));
  const BlockSteps steps = model.layer_steps(0, llama_shape(1));
  // torchtitan's policy keeps the attention kernel's output, not its rotated inputs.
  const auto again = named(steps.alternate_matmul_recompute, "attn.rope.");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].name, "attn.rope.q.recompute");
  EXPECT_DOUBLE_EQ(total_bytes(again), total_bytes(named(steps.forward, "attn.rope.")));
  // Megatron's selective recompute checkpoints the core attention from the rotated tensors.
  EXPECT_TRUE(named(steps.selective_recompute, "attn.rope").empty());
}

}  // namespace
}  // namespace racksim
