// The first stage's embedding block as Megatron's LanguageModelEmbedding runs it (the word lookup,
// the learned position table, the copy to sequence-first, the embedding dropout and the TP
// collectives between them), against bytes worked by hand, and its table gradients' accumulation.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/training_scenario.h"
#include "workloads/model/transformer.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

// GPT-2 small's widths: hidden 768, vocabulary 51,200, 12 layers.
config::Model gpt_model(bool learned_positions, double dropout) {
  config::Model m;
  m.set_hidden_size(768);
  m.set_num_layers(12);
  m.set_num_heads(12);
  m.set_ffn_hidden_size(3072);
  m.set_activation(config::Model::GELU);
  m.set_vocab_size(51200);
  m.set_hidden_dropout(dropout);
  if (learned_positions) m.set_position_encoding(config::Model::LEARNED_ABSOLUTE);
  return m;
}

RankShape shape_of(int tp, bool sequence_parallel, bool transpose) {
  RankShape shape{4, 1024, tp, sequence_parallel, DataType::kBf16};
  shape.embedding_transpose = transpose;
  return shape;
}

std::vector<std::string> names(const std::vector<LayerStep>& steps) {
  std::vector<std::string> out;
  for (const LayerStep& s : steps) out.push_back(s.name);
  return out;
}

const LayerStep& step(const std::vector<LayerStep>& steps, const std::string& name) {
  for (const LayerStep& s : steps) {
    if (s.name == name) return s;
  }
  throw std::out_of_range(name);
}

constexpr double kTokens = 4 * 1024, kHidden = 768, kElement = 2;
constexpr double kElements = kTokens * kHidden;

TEST(EmbeddingBlock, GptOnOneGpuLooksUpAddsPositionsTransposesAndDrops) {
  const BlockSteps block =
      TransformerModel(gpt_model(true, 0.1)).embedding_steps(shape_of(1, false, true));
  EXPECT_EQ(names(block.forward),
            (std::vector<std::string>{"embedding", "embedding.position", "embedding.position_add",
                                      "embedding.transpose", "embedding.dropout"}));
  EXPECT_DOUBLE_EQ(step(block.forward, "embedding").hbm_bytes, kElement * kElements);
  EXPECT_DOUBLE_EQ(step(block.forward, "embedding.position_add").hbm_bytes,
                   3 * kElement * kElements);
  EXPECT_DOUBLE_EQ(step(block.forward, "embedding.transpose").hbm_bytes, 2 * kElement * kElements);
  EXPECT_DOUBLE_EQ(step(block.forward, "embedding.dropout").hbm_bytes,
                   (2 * kElement + 1) * kElements);
  // The backward: the dropout's, then each table's dense gradient (the whole table zeroed, the
  // strided gradient copied, read and summed into the rows); the add and the copy launch none.
  EXPECT_EQ(names(block.backward),
            (std::vector<std::string>{"embedding.dropout.bwd", "embedding.position.bwd",
                                      "embedding.bwd"}));
  EXPECT_DOUBLE_EQ(step(block.backward, "embedding.dropout.bwd").hbm_bytes,
                   (2 * kElement + 1) * kElements);
  EXPECT_DOUBLE_EQ(step(block.backward, "embedding.position.bwd").hbm_bytes,
                   kElement * (1024 * kHidden + 4 * kElements));
  EXPECT_DOUBLE_EQ(step(block.backward, "embedding.bwd").hbm_bytes,
                   kElement * (51200 * kHidden + 4 * kElements));
  EXPECT_DOUBLE_EQ(step(block.forward, "embedding").weight_elements, 51200 * kHidden);
  EXPECT_DOUBLE_EQ(step(block.forward, "embedding.position").weight_elements, 1024 * kHidden);
}

TEST(EmbeddingBlock, WithoutPositionsOrDropoutOnlyTheLookupAndTheCopyRun) {
  const TransformerModel model(gpt_model(false, 0));
  const BlockSteps megatron = model.embedding_steps(shape_of(1, false, true));
  EXPECT_EQ(names(megatron.forward),
            (std::vector<std::string>{"embedding", "embedding.transpose"}));
  // Batch-first code (torchtitan, llm-foundry) copies nothing, and its gradient arrives whole.
  const BlockSteps batch_first = model.embedding_steps(shape_of(1, false, false));
  EXPECT_EQ(names(batch_first.forward), (std::vector<std::string>{"embedding"}));
  EXPECT_DOUBLE_EQ(step(batch_first.backward, "embedding.bwd").hbm_bytes,
                   kElement * (51200 * kHidden + 2 * kElements));
}

TEST(EmbeddingBlock, SequenceParallelReduceScattersTheTransposedLookup) {
  // Rotary models under sequence parallelism (Megatron-Core's reduce_scatter_embeddings): the
  // rank's vocabulary rows, the copy, then a reduce-scatter whose backward is an all-gather.
  const BlockSteps block =
      TransformerModel(gpt_model(false, 0.1)).embedding_steps(shape_of(4, true, true));
  EXPECT_EQ(names(block.forward), (std::vector<std::string>{"embedding", "embedding.transpose",
                                                            "embedding.out", "embedding.dropout"}));
  const LayerStep& out = step(block.forward, "embedding.out");
  EXPECT_EQ(out.forward, CollectiveKind::kReduceScatter);
  EXPECT_EQ(out.backward, CollectiveKind::kAllGather);
  EXPECT_DOUBLE_EQ(out.bytes, kElement * kElements);
  EXPECT_DOUBLE_EQ(step(block.forward, "embedding").weight_elements, 51200 / 4 * kHidden);
  // The dropout runs on the rank's quarter of the tokens.
  EXPECT_DOUBLE_EQ(step(block.forward, "embedding.dropout").hbm_bytes,
                   (2 * kElement + 1) * kElements / 4);
}

TEST(EmbeddingBlock, APositionTableUnderSequenceParallelismIsAllReducedThenSplit) {
  // The learned table is added to the whole sum, so the lookup is all-reduced; the split after
  // the copy launches no collective forward and gathers the gradient back; Megatron clones it.
  const BlockSteps block =
      TransformerModel(gpt_model(true, 0.1)).embedding_steps(shape_of(2, true, true));
  EXPECT_EQ(names(block.forward),
            (std::vector<std::string>{"embedding", "embedding.out", "embedding.position",
                                      "embedding.position_add", "embedding.transpose",
                                      "embedding.scatter", "embedding.scatter_clone",
                                      "embedding.dropout"}));
  const LayerStep& out = step(block.forward, "embedding.out");
  EXPECT_EQ(out.forward, CollectiveKind::kAllReduce);
  EXPECT_FALSE(out.backward.has_value());
  const LayerStep& scatter = step(block.forward, "embedding.scatter");
  EXPECT_FALSE(scatter.forward.has_value());
  EXPECT_EQ(scatter.backward, CollectiveKind::kAllGather);
  EXPECT_DOUBLE_EQ(step(block.forward, "embedding.scatter_clone").hbm_bytes,
                   2 * kElement * kElements / 2);
  EXPECT_DOUBLE_EQ(step(block.forward, "embedding.dropout").hbm_bytes,
                   (2 * kElement + 1) * kElements / 2);
}

// The word table's gradient joins the step's as every weight gradient does, except that no GEMM
// can fuse it: under FUSED_IN_WGRAD Megatron's hook adds it to the FP32 buffer (2 + 2 x 4 B an
// element of the rank's table, every micro-batch), as under MAIN_GRAD_ADD.
TEST(EmbeddingBlock, TheTableGradientAccumulatesInAKernelOfItsOwn) {
  auto s = testing::scenario(1, 1, 1, config::Training::ONE_F_ONE_B);
  const double table = 128256.0 * 4096;  // llama3-8b's vocabulary x hidden
  auto accumulate = [&](config::Training::GradAccumulation mode) {
    s.mutable_training()->set_grad_accumulation(mode);
    const auto step = build_training_step(resolve_training_plan(s));
    std::map<int, double> bytes;  // micro-batch -> bytes, on rank 0
    for (const Op& op : step.graph.ops()) {
      if (op.kind == OpKind::kCompute && op.rank == 0 &&
          step.graph.label(op.label) == "embedding.bwd.grad_accumulate") {
        bytes[op.micro_batch] = op.hbm_bytes;
      }
    }
    return bytes;
  };
  const auto fused = accumulate(config::Training::FUSED_IN_WGRAD);
  ASSERT_EQ(fused.size(), 8u);
  EXPECT_DOUBLE_EQ(fused.at(0), (2 + 2 * 4) * table);
  const auto autograd = accumulate(config::Training::AUTOGRAD);
  EXPECT_FALSE(autograd.contains(0));
  EXPECT_DOUBLE_EQ(autograd.at(1), 3 * 2 * table);
}

}  // namespace
}  // namespace racksim
