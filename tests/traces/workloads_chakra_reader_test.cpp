// The Chakra reader on the sample traces (tests/data/chakra, copied from the ASTRA-sim and
// Chakra repositories with their licences): what each node becomes in the event graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "traces/chakra_reader.h"

namespace racksim::chakra {
namespace {

std::string sample(const std::string& path) {
  return std::string(RACKSIM_SOURCE_DIR) + "/tests/data/chakra/" + path;
}

std::vector<OpId> ops_of_kind(const EventGraph& g, OpKind kind) {
  std::vector<OpId> ops;
  for (OpId id = 0; id < g.size(); ++id) {
    if (g.op(id).kind == kind) ops.push_back(id);
  }
  return ops;
}

TEST(ChakraReader, MicrobenchAllReduceIsOneCollectivePerRank) {
  const ChakraTrace t =
      read_chakra_trace(sample("astra-sim_microbench/all_reduce/8npus_1MB/all_reduce"));
  ASSERT_EQ(t.graph.num_ranks(), 8u);
  ASSERT_EQ(t.graph.size(), 8u);
  for (OpId id = 0; id < 8; ++id) {
    const Op& op = t.graph.op(id);
    EXPECT_EQ(op.rank, id);
    EXPECT_EQ(op.kind, OpKind::kCollective);
    EXPECT_EQ(op.collective, CollectiveKind::kAllReduce);
    EXPECT_EQ(op.amount, 1048576.0);
    EXPECT_EQ(t.graph.communicator(op.peer).size(), 8u);  // no pg_name: every rank
    EXPECT_EQ(t.graph.streams()[op.stream].name, "comm");
    EXPECT_EQ(op.dim, CommDim::kOther);
  }
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].name, "group[8 ranks: 0,1,..,7]");  // named by its ranks
}

TEST(ChakraReader, AllGatherSizeIsWhatEachRankContributes) {
  const ChakraTrace t =
      read_chakra_trace(sample("astra-sim_microbench/all_gather/4npus_1MB/all_gather"));
  ASSERT_EQ(t.graph.size(), 4u);
  EXPECT_EQ(t.graph.op(0).collective, CollectiveKind::kAllGather);
  EXPECT_EQ(t.graph.op(0).amount, 4.0 * 1048576);  // racksim counts the gathered buffer
}

TEST(ChakraReader, PytorchTraceLoadsWithChakrasOwnExpectations) {
  const ChakraTrace t = read_chakra_trace(sample("chakra_pytorch_converted_rank0.et"));
  const EventGraph& g = t.graph;
  ASSERT_EQ(g.num_ranks(), 1u);
  EXPECT_EQ(g.size(), 3664u);
  EXPECT_EQ(t.summary.nodes, 3664u);
  EXPECT_EQ(*std::min_element(t.node_id.begin(), t.node_id.end()), 216u);
  EXPECT_EQ(*std::max_element(t.node_id.begin(), t.node_id.end()), 7022u);
  // Issuable first (no dependencies), by id: 216 then 432, as Chakra's feeder test expects.
  std::vector<uint64_t> roots;
  for (OpId id = 0; id < g.size(); ++id) {
    if (g.deps(id).empty()) roots.push_back(t.node_id[id]);
  }
  std::sort(roots.begin(), roots.end());
  ASSERT_GE(roots.size(), 2u);
  EXPECT_EQ(roots[0], 216u);
  EXPECT_EQ(roots[1], 432u);
  EXPECT_EQ(t.node_id[0], 216u);  // and the replay order starts with it
  // The children of 216 begin with 217, 430, 435.
  const OpId op216 = 0;
  std::vector<uint64_t> children;
  for (OpId id = 0; id < g.size(); ++id) {
    const auto deps = g.deps(id);
    if (std::find(deps.begin(), deps.end(), op216) != deps.end()) children.push_back(t.node_id[id]);
  }
  std::sort(children.begin(), children.end());
  ASSERT_GE(children.size(), 3u);
  EXPECT_EQ(children[0], 217u);
  EXPECT_EQ(children[1], 430u);
  EXPECT_EQ(children[2], 435u);
  // 1,277 ctrl_deps point at call-tree parents outside the file: warned about, not edges.
  EXPECT_EQ(t.summary.ctrl_dangling, 1277u);
  EXPECT_EQ(t.summary.dangling_deps, 0u);
  EXPECT_EQ(t.summary.cpu_ops, 2448u);  // is_cpu_op nodes run on the host stream
  EXPECT_EQ(ops_of_kind(g, OpKind::kCollective).size(), 7u);  // the GPU-side NCCL kernels
  bool warned = false;
  for (const auto& w : t.warnings) warned |= w.find("1277 of 3664 ctrl_deps") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(ChakraReader, JsonVariantReadsLikeTheProtobufOne) {
  const ChakraTrace t = read_chakra_trace(sample("chakra_small_json_feeder_sample"));
  ASSERT_EQ(t.graph.num_ranks(), 1u);
  EXPECT_EQ(t.graph.size(), 7u);
  EXPECT_EQ(t.summary.cpu_ops, 5u);  // 216, 217, 432, 433, 541
  // Node 435 is a GPU collective without comm_type and comm_size: a warned rendezvous.
  EXPECT_EQ(t.summary.missing_comm_fields, 2u);
  const OpId first = 0;
  EXPECT_EQ(t.node_id[first], 216u);
  EXPECT_DOUBLE_EQ(t.graph.op(first).duration_s, 318e-6);
}

TEST(ChakraReader, CustomRingAllReduceMatchesSendsAndRecvs) {
  const ChakraTrace t =
      read_chakra_trace(sample("astra-sim_custom_ring_allreduce_8npus_1MB/custom_allreduce"));
  ASSERT_EQ(t.graph.num_ranks(), 8u);
  EXPECT_EQ(t.graph.size(), 8u * 35);
  EXPECT_EQ(ops_of_kind(t.graph, OpKind::kSend).size(), 8u * 14);
  EXPECT_EQ(ops_of_kind(t.graph, OpKind::kRecv).size(), 8u * 14);
  for (OpId id : ops_of_kind(t.graph, OpKind::kSend)) {
    const Op& op = t.graph.op(id);
    EXPECT_EQ(op.peer, (op.rank + 1) % 8);  // comm_dst; comm_src defaults to the file's rank
    EXPECT_EQ(op.amount, 131072.0);
  }
  for (OpId id : ops_of_kind(t.graph, OpKind::kCompute)) {
    EXPECT_DOUBLE_EQ(t.graph.op(id).duration_s, 7e-6);
  }
}

TEST(ChakraReader, GeneratedSamples) {
  const std::string dir = "generated_chakra_generator_equivalent/";
  {
    const ChakraTrace t = read_chakra_trace(sample(dir + "two_comp_nodes_dependent"));
    ASSERT_EQ(t.graph.num_ranks(), 4u);
    ASSERT_EQ(t.graph.size(), 8u);
    EXPECT_EQ(t.graph.deps(t.graph.size() - 1).size(), 1u);
  }
  {
    const ChakraTrace t = read_chakra_trace(sample(dir + "one_remote_mem_load_node"));
    EXPECT_EQ(t.summary.memory_ops, 4u);
    EXPECT_EQ(t.graph.op(0).hbm_bytes, 1024.0);
    EXPECT_LT(t.graph.op(0).duration_s, 0);  // tensor_size only: the compute model times it
  }
  {
    const ChakraTrace t = read_chakra_trace(sample(dir + "p2p_ring_sendrecv"));
    EXPECT_EQ(ops_of_kind(t.graph, OpKind::kSend).size(), 4u);
    EXPECT_EQ(t.graph.op(ops_of_kind(t.graph, OpKind::kSend)[0]).tag, 7u);
  }
  {
    const ChakraTrace t = read_chakra_trace(sample(dir + "comp_allreduce_comp"));
    EXPECT_EQ(ops_of_kind(t.graph, OpKind::kCollective).size(), 4u);
    EXPECT_EQ(ops_of_kind(t.graph, OpKind::kCompute).size(), 8u);
  }
}

TEST(ChakraReader, ModelModeTimesNodesWithCountsByTheModel) {
  ReadOptions options;
  options.compute = ComputeSource::kModel;
  const ChakraTrace t = read_chakra_trace(
      sample("generated_chakra_generator_equivalent/one_remote_mem_load_node"), options);
  EXPECT_EQ(t.summary.timed_model, 4u);
  const ChakraTrace r =
      read_chakra_trace(sample("generated_chakra_generator_equivalent/one_comp_node"), options);
  // No num_ops or tensor_size: the recorded 5 us stays.
  EXPECT_EQ(r.summary.timed_recorded, 4u);
  EXPECT_DOUBLE_EQ(r.graph.op(0).duration_s, 5e-6);
}

TEST(ChakraReader, GroupNamesMapToDimensions) {
  EXPECT_EQ(dim_of_group_name("tp"), CommDim::kTp);
  EXPECT_EQ(dim_of_group_name("TENSOR_MODEL_PARALLEL_GROUP"), CommDim::kTp);
  EXPECT_EQ(dim_of_group_name("data_parallel"), CommDim::kDp);
  EXPECT_EQ(dim_of_group_name("pp3"), CommDim::kPp);
  EXPECT_EQ(dim_of_group_name("expert-0"), CommDim::kEp);
  EXPECT_EQ(dim_of_group_name("7"), CommDim::kOther);
  EXPECT_EQ(dim_of_group_name("default_pg"), CommDim::kOther);
}

}  // namespace
}  // namespace racksim::chakra
