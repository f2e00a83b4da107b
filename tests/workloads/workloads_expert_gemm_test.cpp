// A rank's routed experts as grouped GEMMs: one product per local expert over the token copies it
// received, as one grouped kernel or (training.expert_gemm PER_EXPERT_STREAMS, the
// megatron-bridge framework's) as Transformer Engine's cuBLAS GEMM per expert on four streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/support/training_scenario.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer.h"
#include "workloads/training/framework_presets.h"
#include "workloads/training/step_shape.h"

namespace racksim {
namespace {

const LayerStep& step_named(const BlockSteps& block, const std::string& name) {
  const auto it = std::find_if(block.forward.begin(), block.forward.end(),
                               [&](const LayerStep& s) { return s.name == name; });
  EXPECT_NE(it, block.forward.end()) << name;
  return *it;
}

// Qwen3-30B-A3B (128 experts of 768, 8 per token) at EP8 on 4,096 tokens: 16 experts a rank,
// each receiving 4,096 x 8 / 16 = 2,048 token copies under balanced routing.
TEST(ExpertGemms, OneProductPerLocalExpertOverTheCopiesItReceived) {
  const TransformerModel model(*model_preset("qwen3-30b-a3b"));
  RankShape shape;
  shape.seq_length = 4096;
  shape.ep = 8;
  const BlockSteps block = model.layer_steps(0, shape);
  for (const char* name : {"moe.experts.up", "moe.experts.down"}) {
    const LayerStep& gemm = step_named(block, name);
    EXPECT_EQ(gemm.shape.batch, 16) << name;
    EXPECT_EQ(gemm.shape.m, 2048) << name;
    EXPECT_EQ(gemm.shape.streams, 0) << name;  // one grouped kernel by default
    EXPECT_DOUBLE_EQ(gemm.flops, gemm.shape.flops()) << name;
  }
  EXPECT_EQ(step_named(block, "moe.experts.up").shape.n, 2 * 768);  // gate and up together
  EXPECT_DOUBLE_EQ(step_named(block, "moe.experts.down").weight_elements, 16.0 * 768 * 2048);
  shape.expert_gemm_streams = 4;
  EXPECT_EQ(step_named(model.layer_steps(0, shape), "moe.experts.up").shape.streams, 4);
}

// Fewer token copies than a rank's experts: only the experts a copy reached run a GEMM, one row
// each (8 tokens x 8 copies over 128 experts at EP1: 64 products of one row).
TEST(ExpertGemms, ExpertsNoCopyReachedRunNoGemm) {
  const TransformerModel model(*model_preset("qwen3-30b-a3b"));
  RankShape shape;
  shape.seq_length = 8;
  const BlockSteps block = model.layer_steps(0, shape);
  const LayerStep& up = step_named(block, "moe.experts.up");
  EXPECT_EQ(up.shape.batch, 64);
  EXPECT_EQ(up.shape.m, 1);
  EXPECT_DOUBLE_EQ(up.flops, up.shape.flops());
}

TEST(ExpertGemms, PerExpertStreamsAreTransformerEnginesFourAndMegatronBridgeSetsThem) {
  config::Scenario s = testing::scenario(1, 1, 1, config::Training::ONE_F_ONE_B);
  EXPECT_EQ(rank_shape(s).expert_gemm_streams, 0);
  s.mutable_training()->set_expert_gemm(config::Training::PER_EXPERT_STREAMS);
  EXPECT_EQ(rank_shape(s).expert_gemm_streams, 4);
  EXPECT_EQ(framework_training("megatron-bridge", s)->expert_gemm(),
            config::Training::PER_EXPERT_STREAMS);
  EXPECT_FALSE(framework_training("hai-llm", s)->has_expert_gemm());
}

}  // namespace
}  // namespace racksim
