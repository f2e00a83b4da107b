// layout.pipeline_layout: Megatron-Core's layer layout string read into chunk sizes, and the
// pipeline map built from them.
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <vector>

#include "workloads/training/pipeline_layout.h"
#include "workloads/training/pipeline_map.h"

namespace racksim {
namespace {

std::vector<int> transformer_layers(const std::vector<LayoutChunk>& chunks) {
  std::vector<int> sizes;
  for (const LayoutChunk& c : chunks) sizes.push_back(c.transformer_layers);
  return sizes;
}

// Megatron-Bridge's later Llama 3 70B H100 FP8 recipe (perf_recipes/llama/h100/llama3.py): 80
// layers over PP8 x VP5, two to a chunk but three in chunk 35 and one beside the loss in 39.
constexpr const char* kLlama70bLayout = "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL";

TEST(PipelineLayout, UnrollsRepetitionsGroupsAndCosmeticCommas) {
  const std::vector<LayoutChunk> chunks = parse_pipeline_layout(kLlama70bLayout);
  ASSERT_EQ(chunks.size(), 40u);
  std::vector<int> expected(40, 2);
  expected[35] = 3;
  expected[39] = 1;
  EXPECT_EQ(transformer_layers(chunks), expected);
  EXPECT_TRUE(chunks.front().embedding_first);
  EXPECT_EQ(chunks.front().embeddings, 1);
  EXPECT_TRUE(chunks.back().loss_last);
  EXPECT_EQ(chunks.back().losses, 1);
  // Megatron-Core's docstring example: the MTP module and the loss in chunks of their own.
  const std::vector<LayoutChunk> dsv3 = parse_pipeline_layout("Et*3|(tt|)*29,m|L");
  ASSERT_EQ(dsv3.size(), 32u);
  EXPECT_EQ(dsv3[0].transformer_layers, 3);
  EXPECT_EQ(dsv3[30].mtp_modules, 1);
  EXPECT_EQ(dsv3[31].transformer_layers, 0);
  EXPECT_FALSE(parse_pipeline_layout("tE|L").front().embedding_first);  // 'E' not first
}

TEST(PipelineLayout, MalformedStringsSayWhatIsWrong) {
  auto message = [](const char* layout) {
    try {
      parse_pipeline_layout(layout);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("Etx|L").find("unknown layer 'x'"), std::string::npos);
  EXPECT_NE(message("Et\x01|L").find("unknown layer '\\x01'"), std::string::npos);
  EXPECT_NE(message("E((t|)*2)*2|L").find("do not nest"), std::string::npos);
  EXPECT_NE(message("E(t|L").find("never closed"), std::string::npos);
  EXPECT_NE(message("Et*|L").find("followed by a count"), std::string::npos);
  EXPECT_NE(message("Et|L)").find("unexpected ')'"), std::string::npos);
  // A typo's count is refused before anything is unrolled.
  EXPECT_NE(message("Et*99999999999999999999|L").find("at most"), std::string::npos);
  EXPECT_NE(message("E(t*1000|)*1000000|L").find("more than"), std::string::npos);
}

TEST(PipelineMap, ExplicitChunksSitWhereTheLayoutPutsThem) {
  PipelineSplit split;
  split.chunk_layers = transformer_layers(parse_pipeline_layout(kLlama70bLayout));
  const PipelineMap map(8, 5, false, 80, split);
  auto stage_layers = [&](int stage) {
    int n = 0;
    for (int c = 0; c < 5; ++c) n += map.layers({stage, c}).count;
    return n;
  };
  // Chunk c on stage c mod 8: chunk 35 (three layers) on stage 3, chunk 39 (one) on stage 7.
  EXPECT_EQ(stage_layers(3), 11);
  EXPECT_EQ(stage_layers(7), 9);
  EXPECT_EQ(stage_layers(0), 10);
  EXPECT_EQ(map.layers({3, 4}).count, 3);
  EXPECT_EQ(map.layers({3, 4}).first, 70);  // 35 chunks of two before it
  EXPECT_EQ(map.layers({7, 4}).first, 79);
  // The same chunks as counting the embedding and the loss as layers give the same map.
  PipelineSplit counted;
  counted.embedding_as_layer = true;
  counted.loss_as_layer = true;
  PipelineSplit written;
  written.chunk_layers = transformer_layers(parse_pipeline_layout("Et|tt|tt|tL"));
  const PipelineMap a(2, 2, false, 6, counted);
  const PipelineMap b(2, 2, false, 6, written);
  for (int stage = 0; stage < 2; ++stage) {
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(a.layers({stage, c}).first, b.layers({stage, c}).first);
      EXPECT_EQ(a.layers({stage, c}).count, b.layers({stage, c}).count);
    }
  }
  // Chunks that do not fill the pipeline are refused.
  split.chunk_layers.pop_back();
  EXPECT_THROW(PipelineMap(8, 5, false, 80, split), std::invalid_argument);
}

}  // namespace
}  // namespace racksim
