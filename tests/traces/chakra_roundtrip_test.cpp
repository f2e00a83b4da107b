// Generated workloads round-trip through Chakra files: the training step's event graph,
// written rank by rank and read back, is identical field for field (ops, dependencies,
// streams, communicators, labels).
#include <gtest/gtest.h>

#include <fstream>

#include "config/scenario_loader.h"
#include "tests/support/graph_compare.h"
#include "tests/support/run_racksim.h"
#include "traces/chakra_reader.h"
#include "traces/chakra_writer.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

void expect_round_trip(const std::string& scenario_text) {
  const config::LoadedScenario loaded =
      config::load_scenario_text(scenario_text, "test.textproto", {});
  const TrainingStep step = build_training_step(resolve_training_plan(loaded.scenario));
  testing::TempDir dir;
  const std::string prefix = (dir.path() / "trace").string();
  const chakra::ChakraWriter writer(step.graph, {[](const Op&) { return 1e-6; }});
  for (RankId r = 0; r < step.graph.num_ranks(); ++r) {
    std::ofstream out(chakra::rank_file_name(prefix, r), std::ios::binary);
    writer.write_rank(r, out);
  }
  const chakra::ChakraTrace t = chakra::read_chakra_trace(prefix);
  EXPECT_TRUE(t.warnings.empty());
  testing::expect_same_graph(step.graph, t.graph);
}

TEST(ChakraRoundTrip, TensorPipelineDataParallelStep) {
  expect_round_trip(R"(
model { preset: "llama3-8b" num_layers: 4 }
hardware { preset: "dgx-h100" nodes: 2 }
layout { tp: 4 pp: 2 dp: 2 sequence_parallel: true }
training { global_batch_size: 8 micro_batch_size: 1 seq_length: 2048 recompute: SELECTIVE }
)");
}

TEST(ChakraRoundTrip, GPipeWithFullRecompute) {
  expect_round_trip(R"(
model { preset: "llama3-8b" num_layers: 8 }
hardware { preset: "dgx-h100" nodes: 1 }
layout { tp: 2 pp: 4 dp: 1 }
training { global_batch_size: 8 micro_batch_size: 2 seq_length: 1024 recompute: FULL schedule: GPIPE }
)");
}

}  // namespace
}  // namespace racksim
