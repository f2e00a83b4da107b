// Every sample trace replays on three platforms (one DGX H100, two DGX H100, a ring), with a
// report whose breakdown adds up to the step time; traces with an obvious answer are checked
// against it. One simulation per test (SimGrid allows one per process).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "app/trace_replay.h"

namespace racksim {
namespace {

std::string sample(const std::string& path) {
  return std::string(RACKSIM_SOURCE_DIR) + "/tests/data/chakra/" + path;
}

enum class Platform { kOneNode, kTwoNodes, kRing };

app::TraceReplayRequest request_for(const std::string& trace, Platform platform) {
  app::TraceReplayRequest r;
  r.trace = sample(trace);
  r.hardware_preset = "dgx-h100";
  r.nodes = platform == Platform::kTwoNodes ? 2 : 1;
  r.topology =
      platform == Platform::kRing ? app::TraceTopology::kRing : app::TraceTopology::kCluster;
  return r;
}

struct Case {
  std::string name;
  std::string trace;
  double expected_step_s = -1;  // < 0: not known in closed form
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

constexpr const char* kGenerated = "generated_chakra_generator_equivalent/";

const Case kCases[] = {
    {"MicroAllReduce4", "astra-sim_microbench/all_reduce/4npus_1MB/all_reduce"},
    {"MicroAllReduce8", "astra-sim_microbench/all_reduce/8npus_1MB/all_reduce"},
    {"MicroAllGather4", "astra-sim_microbench/all_gather/4npus_1MB/all_gather"},
    {"MicroAllToAll4", "astra-sim_microbench/all_to_all/4npus_1MB/all_to_all"},
    {"MicroReduceScatter4", "astra-sim_microbench/reduce_scatter/4npus_1MB/reduce_scatter"},
    {"CustomRingAllReduce8", "astra-sim_custom_ring_allreduce_8npus_1MB/custom_allreduce"},
    {"OneCompNode", std::string(kGenerated) + "one_comp_node", 5e-6},
    {"TwoCompDependent", std::string(kGenerated) + "two_comp_nodes_dependent", 10e-6},
    // Independent kernels still share the rank's one compute stream.
    {"TwoCompIndependent", std::string(kGenerated) + "two_comp_nodes_independent", 10e-6},
    {"CollAllReduce", std::string(kGenerated) + "one_comm_coll_node_allreduce"},
    {"CollAllGather", std::string(kGenerated) + "one_comm_coll_node_allgather"},
    {"CollAllToAll", std::string(kGenerated) + "one_comm_coll_node_alltoall"},
    {"CollReduceScatter", std::string(kGenerated) + "one_comm_coll_node_reducescatter"},
    {"MemLoad", std::string(kGenerated) + "one_remote_mem_load_node"},
    {"CompAllReduceComp", std::string(kGenerated) + "comp_allreduce_comp"},
    {"P2pRing", std::string(kGenerated) + "p2p_ring_sendrecv"},
    {"PytorchRank0", "chakra_pytorch_converted_rank0.et"},
    {"JsonSample", "chakra_small_json_feeder_sample"},
};

class SampleReplay : public ::testing::TestWithParam<std::tuple<Case, Platform>> {};

TEST_P(SampleReplay, ReplaysWithAConsistentReport) {
  const auto& [c, platform] = GetParam();
  const app::TraceReplay run = app::replay_trace(request_for(c.trace, platform));
  const auto& report = run.report;
  EXPECT_GT(report.step_time_s, 0);
  EXPECT_NEAR(report.breakdown.total_s(), report.step_time_s, 1e-12 + 1e-9 * report.step_time_s);
  EXPECT_EQ(report.sim_ops, run.trace.graph.size());
  for (const auto& t : run.result.timing) {
    EXPECT_GE(t.end_s, 0);  // every op ran
  }
  if (c.expected_step_s > 0) {
    EXPECT_NEAR(report.step_time_s, c.expected_step_s, 1e-12);
  }
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<Case, Platform>>& info) {
  static const char* const kPlatform[] = {"Dgx1", "Dgx2", "Ring"};
  return std::get<0>(info.param).name + "_" + kPlatform[static_cast<int>(std::get<1>(info.param))];
}

INSTANTIATE_TEST_SUITE_P(
    Samples, SampleReplay,
    ::testing::Combine(::testing::ValuesIn(kCases),
                       ::testing::Values(Platform::kOneNode, Platform::kTwoNodes, Platform::kRing)),
    case_name);

// fwd (100 us), an all-reduce of 1 MiB over 4 ranks, opt (10 us): the all-reduce on one
// DGX H100 is 6 ring steps of S/4 over NVLink after the call latency.
TEST(ChakraReplay, ComputeAllReduceComputeAddsUp) {
  const app::TraceReplay run = app::replay_trace(
      request_for(std::string(kGenerated) + "comp_allreduce_comp", Platform::kOneNode));
  OpId all_reduce = 0;
  while (run.trace.graph.op(all_reduce).kind != OpKind::kCollective) ++all_reduce;  // rank 0's
  const double collective =
      run.result.timing[all_reduce].end_s - run.result.timing[all_reduce].start_s;
  EXPECT_NEAR(run.report.step_time_s, 110e-6 + collective, 1e-12);
  EXPECT_NEAR(run.report.breakdown.compute_s, 110e-6, 1e-12);
  EXPECT_NEAR(run.report.breakdown.exposed_comm(CommDim::kOther), collective, 1e-12);
  EXPECT_GT(collective, 6e-6);  // at least the call latency
}

// Model mode: the memory node is timed from its 1,024 bytes by the HBM roofline.
TEST(ChakraReplay, ModelModeTimesMemoryNodesByBandwidth) {
  auto request =
      request_for(std::string(kGenerated) + "one_remote_mem_load_node", Platform::kOneNode);
  request.compute = chakra::ComputeSource::kModel;
  const app::TraceReplay run = app::replay_trace(request);
  EXPECT_EQ(run.trace.summary.timed_model, 4u);
  EXPECT_GT(run.report.step_time_s, 0);
  EXPECT_LT(run.report.step_time_s, 10e-6);  // launch overhead + 1 KiB at HBM speed
}

// A mapping file places rank r on GPU 7 - r: the replay is the same ring all-reduce, and the
// report says so.
TEST(ChakraReplay, MappingFilePlacesRanks) {
  auto request =
      request_for("astra-sim_microbench/all_reduce/8npus_1MB/all_reduce", Platform::kOneNode);
  const std::string mapping = ::testing::TempDir() + "/reverse.mapping";
  {
    std::FILE* f = std::fopen(mapping.c_str(), "w");
    std::fputs("# rank 0 first\n7\n6\n5\n4\n3\n2\n1\n0\n", f);
    std::fclose(f);
  }
  request.mapping_file = mapping;
  const app::TraceReplay run = app::replay_trace(request);
  EXPECT_GT(run.report.step_time_s, 0);
}

// Host (is_cpu_op) nodes do not occupy the GPU: the PyTorch trace's step is shorter than its
// host and GPU work added up, and its GPU stream's busy time is the recorded kernels' sum.
TEST(ChakraReplay, HostOpsRunBesideTheGpu) {
  const app::TraceReplay run =
      app::replay_trace(request_for("chakra_pytorch_converted_rank0.et", Platform::kOneNode));
  double host = 0, gpu = 0;
  for (const auto& s : run.report.streams) {
    if (s.stream == "cpu") host = s.busy_s;
    if (s.stream == "compute") gpu = s.busy_s;
  }
  EXPECT_NEAR(host, 52252e-6, 1e-9);  // the is_cpu_op durations add up to 52,252 us
  EXPECT_GT(gpu, 0.29);
  EXPECT_LT(run.report.step_time_s, host + gpu);
}

}  // namespace
}  // namespace racksim
