// The Kineto reader: the shipped HTA samples (newer NCCL kernel args, older nccl:* annotations)
// and synthetic traces whose graph can be checked op by op; bad traces name the file, the event
// and the field.
#include <gtest/gtest.h>

#include <zlib.h>

#include <fstream>
#include <string>

#include "common/error.h"
#include "tests/support/kineto_trace.h"
#include "tests/support/run_racksim.h"
#include "traces/kineto_reader.h"

namespace racksim {
namespace {

using testing::KinetoTraceBuilder;
using testing::TempDir;

std::string sample(const std::string& name) {
  return std::string(RACKSIM_SOURCE_DIR) + "/tests/data/kineto/" + name;
}

// The InputError's full message of `f()`, or "" when it does not throw one.
template <typename F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::vector<const Op*> ops_of(const EventGraph& g, RankId rank, OpKind kind) {
  std::vector<const Op*> ops;
  for (const Op& op : g.ops()) {
    if (op.rank == rank && op.kind == kind) ops.push_back(&op);
  }
  return ops;
}

// Found by the fuzz target: nlohmann/json reports a number beyond a double's range as
// out_of_range, not as a parse error; it escaped the reader as an internal error.
TEST(KinetoReader, ANumberTooLargeForADoubleIsAnInputError) {
  const std::string message =
      input_error([] { kineto::read_kineto_bytes(R"({"traceEvents": [], "x": 2e999})", {}); });
  EXPECT_NE(message.find("not valid JSON"), std::string::npos) << message;
  EXPECT_NE(message.find("number overflow"), std::string::npos) << message;
}

TEST(KinetoReader, NewerNcclArgsGiveKindBytesAndGroup) {
  const auto t = kineto::read_kineto_trace({sample("hta-nccl-2ranks-rank0.json.gz")},
                                           {.step = -1, .ranks = 2});
  EXPECT_TRUE(t.replicated);
  EXPECT_EQ(t.step_name, "ProfilerStep#6");  // the last of steps 4, 5, 6
  EXPECT_EQ(t.source_world_size, 2);
  EXPECT_NE(t.gpu.find("A100"), std::string::npos);
  const EventGraph& g = t.trace.graph;
  ASSERT_EQ(g.num_ranks(), 2u);
  const auto collectives = ops_of(g, 0, OpKind::kCollective);
  // Step 6 holds 2 broadcasts (DDP's parameter sync in forward) and 5 bucket all-reduces.
  ASSERT_EQ(collectives.size(), 7u);
  EXPECT_EQ(collectives[0]->collective, CollectiveKind::kBroadcast);
  EXPECT_EQ(collectives[2]->collective, CollectiveKind::kAllReduce);
  int all_reduces = 0;
  for (const Op* op : collectives) {
    EXPECT_EQ(g.communicator(op->peer), (std::vector<RankId>{0, 1}));
    if (op->collective == CollectiveKind::kAllReduce) ++all_reduces;
  }
  EXPECT_EQ(all_reduces, 5);
  // The first all-reduce of the file (step 6's is the 3rd collective): In msg nelems x 4 bytes.
  bool found = false;
  for (const Op* op : collectives) found |= op->amount == 6637568.0 * 4;
  EXPECT_TRUE(found);
  EXPECT_EQ(ops_of(g, 1, OpKind::kCollective).size(), 7u);
  ASSERT_EQ(t.programs.size(), 1u);
  const auto& p = t.programs[0];
  EXPECT_NEAR(p.step_time_s, 224936.243e-6, 1e-8);  // the annotation outlasts the GPU work
  EXPECT_EQ(p.counts.kernels + p.counts.collectives + p.counts.device_copies + p.counts.memsets,
            1258u);
  EXPECT_GT(p.counts.stream_waits, 0u);
  EXPECT_GT(p.counts.thread_anchors, 0u);
}

TEST(KinetoReader, OlderNcclAnnotationsGiveTheCollective) {
  const auto t = kineto::read_kineto_trace({sample("hta-sampled-128ranks-rank0.json.gz")},
                                           {.step = 551, .ranks = 128});
  EXPECT_EQ(t.step_name, "ProfilerStep#551");
  const auto collectives = ops_of(t.trace.graph, 5, OpKind::kCollective);
  std::map<CollectiveKind, int> kinds;
  for (const Op* op : collectives) {
    ++kinds[op->collective];
    EXPECT_EQ(t.trace.graph.communicator(op->peer).size(), 128u);
  }
  EXPECT_EQ(kinds[CollectiveKind::kAllReduce], 2);
  EXPECT_EQ(kinds[CollectiveKind::kAllToAll], 2);
  EXPECT_EQ(kinds[CollectiveKind::kAllGather], 1);
  // nccl:all_reduce with Input Dims [[19618307]] and Input type float.
  bool found = false;
  for (const Op* op : collectives) found |= op->amount == 19618307.0 * 4;
  EXPECT_TRUE(found);
}

TEST(KinetoReader, LaunchGapsStreamOrderAndCollectivesFormTheGraph) {
  TempDir dir;
  for (int rank = 0; rank < 2; ++rank) {
    KinetoTraceBuilder b(rank, 2);
    b.step(1, 1000, 500)
        .kernel("gemm", 1010, 1020, 100)
        .kernel("relu", 1050, 1120, 10)
        .all_reduce(1e6, {0, 1}, 1100, 1130, 50)
        .kernel("gemm", 1300, 1310, 40);
    dir.write("rank" + std::to_string(rank) + ".json", b.text());
  }
  const auto t = kineto::read_kineto_trace({dir.path().string()}, {});
  EXPECT_FALSE(t.replicated);
  const EventGraph& g = t.trace.graph;
  ASSERT_EQ(g.num_ranks(), 2u);
  const auto host = ops_of(g, 0, OpKind::kCompute);
  // Rank 0: 4 launches and the step's tail on cpu.main, 3 kernels on stream 7.
  std::vector<double> cpu, gpu;
  for (const Op* op : host) {
    (g.streams()[op->stream].kind == StreamKind::kHost ? cpu : gpu).push_back(op->duration_s);
  }
  ASSERT_EQ(cpu.size(), 5u);
  EXPECT_NEAR(cpu[0], 15e-6, 1e-12);   // step start to the first launch's end
  EXPECT_NEAR(cpu[1], 40e-6, 1e-12);   // the host gap and the second launch
  EXPECT_NEAR(cpu[4], 195e-6, 1e-12);  // after the last launch to the step's end
  ASSERT_EQ(gpu.size(), 3u);           // recorded durations, in launch order
  EXPECT_NEAR(gpu[0], 100e-6, 1e-12);
  EXPECT_NEAR(gpu[1], 10e-6, 1e-12);
  EXPECT_NEAR(gpu[2], 40e-6, 1e-12);
  const auto coll = ops_of(g, 0, OpKind::kCollective);
  ASSERT_EQ(coll.size(), 1u);
  EXPECT_EQ(coll[0]->amount, 4e6);
  EXPECT_EQ(g.streams()[coll[0]->stream].kind, StreamKind::kComm);
}

TEST(KinetoReader, MismatchedGroupsAcrossRanksNameTheEvent) {
  TempDir dir;
  for (int rank = 0; rank < 2; ++rank) {
    KinetoTraceBuilder b(rank, 2);
    b.step(1, 1000, 500).all_reduce(rank == 0 ? 1e6 : 2e6, {0, 1}, 1100, 1130, 50);
    dir.write("rank" + std::to_string(rank) + ".json", b.text());
  }
  const std::string error =
      input_error([&] { kineto::read_kineto_trace({(dir.path() / "rank*.json").string()}, {}); });
  EXPECT_NE(error.find("rank1.json"), std::string::npos) << error;
  EXPECT_NE(error.find("traceEvents[2]"), std::string::npos) << error;
  EXPECT_NE(error.find("8000000 bytes"), std::string::npos) << error;
}

TEST(KinetoReader, ProcessGroupsMustAgreeAcrossRanks) {
  TempDir dir;
  for (int rank = 0; rank < 2; ++rank) {
    auto j = KinetoTraceBuilder(rank, 2).step(1, 1000, 500).document();
    if (rank == 1) j["distributedInfo"]["pg_config"][0]["ranks"] = {1};
    dir.write("rank" + std::to_string(rank) + ".json", j.dump());
  }
  const std::string error =
      input_error([&] { kineto::read_kineto_trace({dir.path().string()}, {}); });
  EXPECT_NE(error.find("pg_config '0'.ranks"), std::string::npos) << error;
}

TEST(KinetoReader, KernelWithoutAStreamIsAnError) {
  auto j = KinetoTraceBuilder(0, 1).step(1, 1000, 500).kernel("gemm", 1010, 1020, 100).document();
  j["traceEvents"][2]["args"].erase("stream");
  const std::string error = input_error([&] { kineto::read_kineto_bytes(j.dump()); });
  EXPECT_NE(error.find("<memory>"), std::string::npos) << error;
  EXPECT_NE(error.find("traceEvents[2].args.stream"), std::string::npos) << error;
  EXPECT_NE(error.find("missing"), std::string::npos) << error;
}

TEST(KinetoReader, TruncatedJsonNamesTheLine) {
  const std::string text = KinetoTraceBuilder(0, 1).step(1, 1000, 500).document().dump(1);
  const std::string error =
      input_error([&] { kineto::read_kineto_bytes(text.substr(0, text.size() / 2)); });
  EXPECT_NE(error.find("<memory>:"), std::string::npos) << error;
  EXPECT_NE(error.find("not valid JSON"), std::string::npos) << error;
}

TEST(KinetoReader, TruncatedGzipIsAnError) {
  std::ifstream in(sample("hta-sampled-128ranks-rank1.json.gz"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string error =
      input_error([&] { kineto::read_kineto_bytes(bytes.substr(0, bytes.size() / 2), {}); });
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
}

TEST(KinetoReader, OneRankOfAJobNeedsTheOthersOrReplication) {
  const std::string error = input_error(
      [&] { kineto::read_kineto_trace({sample("hta-nccl-2ranks-rank0.json.gz")}, {}); });
  EXPECT_NE(error.find("--ranks 2"), std::string::npos) << error;
  const std::string missing = input_error(
      [&] { kineto::read_kineto_trace({sample("hta-sampled-128ranks-rank*.json.gz")}, {}); });
  EXPECT_NE(missing.find("a world of 128 ranks but 2 files"), std::string::npos) << missing;
}

TEST(KinetoReader, StepMustExist) {
  const std::string error = input_error([&] {
    kineto::read_kineto_trace({sample("hta-nccl-2ranks-rank0.json.gz")}, {.step = 9, .ranks = 2});
  });
  EXPECT_NE(error.find("no ProfilerStep#9 (the trace has steps 4, 5, 6)"), std::string::npos)
      << error;
}

TEST(KinetoReader, DetectsKinetoByContent) {
  EXPECT_TRUE(kineto::is_kineto_file(sample("hta-nccl-2ranks-rank0.json.gz")));
  EXPECT_FALSE(kineto::is_kineto_file(std::string(RACKSIM_SOURCE_DIR) +
                                      "/tests/data/chakra/chakra_small_json_feeder_sample.0.json"));
  EXPECT_FALSE(kineto::is_kineto_input(
      {std::string(RACKSIM_SOURCE_DIR) + "/tests/data/chakra/chakra_pytorch_converted_rank0.et"}));
}

}  // namespace
}  // namespace racksim
