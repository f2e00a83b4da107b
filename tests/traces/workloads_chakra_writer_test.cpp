// The Chakra writer: what it writes is what Chakra tools expect, and racksim's reader reads
// it back to the identical event graph.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/support/graph_compare.h"
#include "tests/support/run_racksim.h"
#include "traces/chakra_reader.h"
#include "traces/chakra_records.h"
#include "traces/chakra_writer.h"

namespace racksim::chakra {
namespace {

using racksim::testing::TempDir;

// A small graph that uses every kind of operation and every field the writer must carry,
// including values Chakra's integer fields cannot hold exactly.
EventGraph every_kind_of_op() {
  EventGraph g(3);
  const StreamId compute = g.add_stream("compute", StreamKind::kCompute);
  const StreamId tp = g.add_stream("comm.tp", StreamKind::kComm);
  const StreamId pp = g.add_stream("comm.pp", StreamKind::kComm);
  const StreamId cpu = g.add_stream("cpu", StreamKind::kHost);
  const StreamId copy = g.add_stream("copy.d2h", StreamKind::kCopy);
  const CommId all = g.add_communicator({0, 1, 2});
  const CommId pair = g.add_communicator({0, 1});
  for (RankId r = 0; r < 3; ++r) {
    OpContext ctx{r, compute, Phase::kBackward, 2, 3};
    const OpId gemm =
        g.add_compute(ctx, "gemm", OpClass::kGemm, 1.5e9 + 0.5, 3e6 + 0.25, DataType::kFp8);
    OpContext host{r, cpu, Phase::kOther, -1, -1};
    const OpId launch = g.add_recorded_compute(host, "launch", 1.234567e-6, 0, 0);
    const OpId both[] = {gemm, launch};
    OpContext comm{r, tp, Phase::kForward, 0, 1};
    const OpId gather = g.add_collective(comm, "all-gather", CollectiveKind::kAllGather, all, 1e6,
                                         CommDim::kTp, both);
    const OpId after[] = {gather};
    if (r < 2) {
      g.add_collective(comm, "all-reduce", CollectiveKind::kAllReduce, pair, 12345.5, CommDim::kDp,
                       after);
    }
    OpContext stage{r, pp, Phase::kForward, 1, -1};
    if (r == 0) g.add_send(stage, "act", 1, 0xF0000001u, 4096, CommDim::kPp, after);
    if (r == 1) g.add_recv(stage, "act", 0, 0xF0000001u, 4096, CommDim::kPp);
    OpContext offload{r, copy, Phase::kOptimizer, -1, -1};
    g.add_copy(offload, "offload", CopyDirection::kDeviceToHost, 1, 8e6, after);
    g.add_compute(ctx, "model-timed", OpClass::kAttention, 2e9, 0, DataType::kBf16, after);
    // A skewed MoE dispatch: shares per member after the mode.
    const uint32_t skew = g.add_weights({0, 0.5, 0.25, 0.25});
    g.add_collective(comm, "dispatch", CollectiveKind::kAllToAll, all, 3e6, CommDim::kEp, after,
                     skew);
    // An FP8 cast: its own class, which a replay's compute model times at its own bandwidth.
    g.add_compute(ctx, "fc1.fp8_cast", OpClass::kCast, 4e6, 1.6e7, DataType::kBf16, after);
  }
  return g;
}

void write_trace(const EventGraph& g, const std::string& prefix, const WriteOptions& options = {}) {
  const ChakraWriter writer(g, options);
  for (RankId r = 0; r < g.num_ranks(); ++r) {
    std::ofstream out(rank_file_name(prefix, r), std::ios::binary);
    writer.write_rank(r, out);
  }
}

TEST(ChakraWriter, RoundTripGivesTheIdenticalGraph) {
  const EventGraph g = every_kind_of_op();
  TempDir dir;
  const std::string prefix = (dir.path() / "t").string();
  write_trace(g, prefix, {[](const Op&) { return 42e-6; }});
  const ChakraTrace t = read_chakra_trace(prefix);
  racksim::testing::expect_same_graph(g, t.graph);
  EXPECT_TRUE(t.summary.racksim_metadata);
  EXPECT_TRUE(t.warnings.empty());
}

TEST(ChakraWriter, NodesCarryWhatChakraToolsRead) {
  const EventGraph g = every_kind_of_op();
  std::ostringstream out;
  ChakraWriter(g, {[](const Op&) { return 42e-6; }}).write_rank(0, out);
  std::vector<ChakraProtoMsg::Node> nodes;
  RecordHandlers h;
  h.node = [&](const ChakraProtoMsg::Node& n, const RecordPlace&) { nodes.push_back(n); };
  h.warn = [](const std::string&) {};
  read_et_bytes(out.str(), "rank0", h);
  auto attr = [](const ChakraProtoMsg::Node& n, const std::string& name) {
    for (const auto& a : n.attr()) {
      if (a.name() == name) return a;
    }
    ADD_FAILURE() << "node " << n.id() << " has no attribute " << name;
    return ChakraProtoMsg::AttributeProto();
  };
  ASSERT_EQ(nodes.size(), 9u);
  const auto& gemm = nodes[0];
  EXPECT_EQ(gemm.type(), ChakraProtoMsg::COMP_NODE);
  EXPECT_EQ(attr(gemm, "num_ops").int64_val(), 1500000001);  // rounded; exact in racksim_flops
  EXPECT_EQ(attr(gemm, "tensor_size").uint64_val(), 3000000u);
  EXPECT_EQ(gemm.duration_micros(), 42u);  // the model's estimate, for tools that need one
  EXPECT_FALSE(attr(gemm, "is_cpu_op").bool_val());
  const auto& launch = nodes[1];
  EXPECT_TRUE(attr(launch, "is_cpu_op").bool_val());
  EXPECT_EQ(launch.duration_micros(), 1u);  // recorded 1.23 us
  const auto& gather = nodes[2];
  EXPECT_EQ(gather.type(), ChakraProtoMsg::COMM_COLL_NODE);
  EXPECT_EQ(attr(gather, "comm_type").int64_val(), ChakraProtoMsg::ALL_GATHER);
  EXPECT_EQ(attr(gather, "comm_size").int64_val(),
            333333);  // each rank's part, as ASTRA-sim reads it
  EXPECT_EQ(attr(gather, "pg_name").string_val(), "0");
  std::vector<uint64_t> gather_deps(gather.data_deps().begin(), gather.data_deps().end());
  EXPECT_EQ(gather_deps, (std::vector<uint64_t>{0, 1}));
  const auto& send = nodes[4];
  EXPECT_EQ(send.type(), ChakraProtoMsg::COMM_SEND_NODE);
  EXPECT_EQ(attr(send, "comm_src").int32_val(), 0);
  EXPECT_EQ(attr(send, "comm_dst").int32_val(), 1);
  EXPECT_EQ(attr(send, "comm_size").int64_val(), 4096);
  EXPECT_EQ(static_cast<uint32_t>(attr(send, "comm_tag").int32_val()), 0xF0000001u);
  EXPECT_EQ(nodes[5].type(), ChakraProtoMsg::MEM_STORE_NODE);
  EXPECT_EQ(attr(nodes[5], "tensor_size").uint64_val(), 8000000u);
}

TEST(ChakraWriter, CommGroupsListEveryCommunicator) {
  const EventGraph g = every_kind_of_op();
  EXPECT_EQ(ChakraWriter(g, {}).comm_groups_json(), "{\n  \"0\": [0, 1, 2],\n  \"1\": [0, 1]\n}\n");
}

TEST(ChakraWriter, GzippedFilesReadTheSame) {
  const EventGraph g = every_kind_of_op();
  TempDir dir;
  const std::string prefix = (dir.path() / "t").string();
  write_trace(g, prefix);
  for (RankId r = 0; r < g.num_ranks(); ++r) {
    const std::string file = rank_file_name(prefix, r);
    ASSERT_EQ(std::system(("gzip " + file).c_str()), 0);  // t.<r>.et.gz
  }
  const ChakraTrace t = read_chakra_trace(prefix);
  racksim::testing::expect_same_graph(g, t.graph);
}

}  // namespace
}  // namespace racksim::chakra
