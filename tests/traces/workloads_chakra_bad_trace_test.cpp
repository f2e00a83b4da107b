// Bad traces: each is a clear InputError naming the file (and the node where there is one),
// or a warning when the trace can still be replayed; never a crash.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "common/error.h"
#include "tests/support/run_racksim.h"
#include "traces/chakra_reader.h"
#include "traces/chakra_records.h"

namespace racksim::chakra {
namespace {

using Node = ChakraProtoMsg::Node;
using namespace std::string_literals;
using racksim::testing::TempDir;

Node comp(uint64_t id, std::vector<uint64_t> deps = {}, uint64_t micros = 5) {
  Node n;
  n.set_id(id);
  n.set_name("comp" + std::to_string(id));
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(micros);
  for (uint64_t d : deps) n.add_data_deps(d);
  return n;
}

Node coll(uint64_t id, int64_t bytes) {
  Node n;
  n.set_id(id);
  n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  auto* type = n.add_attr();
  type->set_name("comm_type");
  type->set_int64_val(ChakraProtoMsg::ALL_REDUCE);
  auto* size = n.add_attr();
  size->set_name("comm_size");
  size->set_int64_val(bytes);
  return n;
}

Node p2p(uint64_t id, bool send, int32_t peer, int32_t tag, int64_t bytes) {
  Node n;
  n.set_id(id);
  n.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
  auto* p = n.add_attr();
  p->set_name(send ? "comm_dst" : "comm_src");
  p->set_int32_val(peer);
  auto* t = n.add_attr();
  t->set_name("comm_tag");
  t->set_int32_val(tag);
  auto* s = n.add_attr();
  s->set_name("comm_size");
  s->set_uint64_val(static_cast<uint64_t>(bytes));
  return n;
}

std::string et_bytes(const std::vector<Node>& nodes) {
  std::ostringstream out;
  {
    RecordWriter w(out);
    ChakraProtoMsg::GlobalMetadata m;
    m.set_version("0.0.4");
    w.write(m);
    for (const Node& n : nodes) w.write(n);
  }
  return out.str();
}

std::string write_file(const TempDir& dir, const std::string& name, const std::string& bytes) {
  const std::string path = (dir.path() / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// Runs `read` and returns the InputError's message ("" and a failure when nothing is thrown).
template <typename F>
std::string input_error(F&& read) {
  try {
    read();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

TEST(ChakraBadTrace, TruncatedFileNamesTheRecord) {
  TempDir dir;
  const std::string bytes = et_bytes({comp(1), comp(2, {1})});
  const std::string path = write_file(dir, "t.0.et", bytes.substr(0, bytes.size() - 4));
  const std::string e = input_error([&] { read_chakra_trace((dir.path() / "t").string()); });
  expect_contains(e, path);
  expect_contains(e, "record 2");
  expect_contains(e, "truncated");
}

TEST(ChakraBadTrace, CutInsideTheLengthPrefix) {
  std::string bytes = et_bytes({comp(1)});
  bytes += '\x80';  // a varint that never ends
  const std::string e = input_error([&] { read_chakra_bytes(bytes); });
  expect_contains(e, "length prefix is cut off");
}

TEST(ChakraBadTrace, WrongWireTypeIsNamed) {
  // Field 1 (id, a varint) written as a length-delimited string.
  std::string node =
      "\x0a\x03"
      "abc";
  std::string bytes = et_bytes({});
  bytes += static_cast<char>(node.size());
  bytes += node;
  const std::string e = input_error([&] { read_chakra_bytes(bytes); });
  expect_contains(e, "field 'id' (1) of Node is length-delimited, expected varint");
}

TEST(ChakraBadTrace, WrongAttributeKindNamesTheNode) {
  Node n = coll(7, 1024);
  n.mutable_attr(1)->set_string_val("big");
  const std::string e = input_error([&] { read_chakra_bytes(et_bytes({n})); });
  expect_contains(e, "node 7 (record 1)");
  expect_contains(e, "attribute 'comm_size' holds string_val, expected a number");
}

TEST(ChakraBadTrace, AnyIntegerKindIsAccepted) {
  Node n = coll(1, 0);
  n.mutable_attr(0)->set_uint32_val(ChakraProtoMsg::ALL_GATHER);
  n.mutable_attr(1)->set_sfixed64_val(4096);
  const ChakraTrace t = read_chakra_bytes(et_bytes({n}));
  EXPECT_EQ(t.graph.op(0).collective, CollectiveKind::kAllGather);
  EXPECT_EQ(t.graph.op(0).amount, 4096.0);
}

TEST(ChakraBadTrace, ZeroLengthStopsReadingWithAWarning) {
  std::string bytes = et_bytes({comp(1)});
  bytes += '\0';
  bytes += et_bytes({comp(2)}).substr(2);  // more records after the zero
  const ChakraTrace t = read_chakra_bytes(bytes);
  EXPECT_EQ(t.graph.size(), 1u);
  ASSERT_FALSE(t.warnings.empty());
  expect_contains(t.warnings[0], "has length 0; reading stopped there");
}

TEST(ChakraBadTrace, UnknownNodeTypeIsANoOpThatKeepsDependencies) {
  Node odd = comp(2, {1});
  odd.set_type(static_cast<ChakraProtoMsg::NodeType>(42));
  const ChakraTrace t = read_chakra_bytes(et_bytes({comp(1), odd, comp(3, {2})}));
  ASSERT_EQ(t.graph.size(), 2u);
  EXPECT_EQ(t.summary.unknown_type, 1u);
  ASSERT_EQ(t.graph.deps(1).size(), 1u);
  EXPECT_EQ(t.graph.deps(1)[0], 0u);  // node 3 waits for node 1 through node 2
  ASSERT_FALSE(t.warnings.empty());
  expect_contains(t.warnings[0], "node 2 (record 2) has node type 42");
}

TEST(ChakraBadTrace, NegativeSize) {
  const std::string e = input_error([&] { read_chakra_bytes(et_bytes({coll(3, -5)})); });
  expect_contains(e, "node 3 (record 1): attribute 'comm_size' = -5 is negative");
}

TEST(ChakraBadTrace, AbsurdSizeAndDuration) {
  const std::string e =
      input_error([&] { read_chakra_bytes(et_bytes({coll(3, int64_t{1} << 60)})); });
  expect_contains(e, "is absurd");
  const std::string d =
      input_error([&] { read_chakra_bytes(et_bytes({comp(4, {}, 1ULL << 50)})); });
  expect_contains(d, "node 4 (record 1): duration_micros");
}

TEST(ChakraBadTrace, AbsurdRecordLength) {
  std::string bytes = et_bytes({});
  bytes += "\xff\xff\xff\xff\x0f";  // 4 GiB
  const std::string e = input_error([&] { read_chakra_bytes(bytes); });
  expect_contains(e, "more than any Chakra record");
}

TEST(ChakraBadTrace, EmptyFileAndGarbage) {
  expect_contains(input_error([&] { read_chakra_bytes(""); }), "is empty");
  const std::string garbage = "\x05hello world, this is not protobuf \xff\xfe";
  EXPECT_FALSE(input_error([&] { read_chakra_bytes(garbage); }).empty());
}

TEST(ChakraBadTrace, CorruptGzip) {
  const std::string bytes = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage-not-deflate"s;
  const std::string e = input_error([&] { read_chakra_bytes(bytes); });
  expect_contains(e, "gzip");
}

TEST(ChakraBadTrace, TruncatedGzip) {
  TempDir dir;
  std::vector<Node> nodes;
  for (uint64_t id = 1; id <= 2000; ++id) nodes.push_back(comp(id, {id - 1}));
  const std::string plain = write_file(dir, "g.0.et", et_bytes(nodes));
  ASSERT_EQ(std::system(("gzip " + plain).c_str()), 0);
  std::ifstream in(plain + ".gz", std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(read_chakra_bytes(gz).graph.size(), 2000u);  // whole: fine
  const std::string e = input_error([&] { read_chakra_bytes(gz.substr(0, gz.size() / 2)); });
  expect_contains(e, "gzip data is truncated or corrupt");
}

TEST(ChakraBadTrace, MissingRankFile) {
  TempDir dir;
  for (int r : {0, 1, 3}) write_file(dir, "t." + std::to_string(r) + ".et", et_bytes({comp(1)}));
  const std::string e = input_error([&] { read_chakra_trace((dir.path() / "t").string()); });
  expect_contains(e, "the file of rank 2 is missing (found ranks 0, 1, 3)");
}

TEST(ChakraBadTrace, RankCountMismatch) {
  TempDir dir;
  for (int r : {0, 1}) write_file(dir, "t." + std::to_string(r) + ".et", et_bytes({comp(1)}));
  ReadOptions options;
  options.expected_ranks = 4;
  const std::string e =
      input_error([&] { read_chakra_trace((dir.path() / "t").string(), options); });
  expect_contains(e, "2 rank file(s) found but 4 ranks expected");
}

TEST(ChakraBadTrace, PeerOutsideTheTrace) {
  TempDir dir;
  write_file(dir, "t.0.et", et_bytes({p2p(1, true, 5, 0, 64)}));
  write_file(dir, "t.1.et", et_bytes({comp(1)}));
  const std::string e = input_error([&] { read_chakra_trace((dir.path() / "t").string()); });
  expect_contains(e, "t.0.et: node 1 (record 1): 'comm_dst' = 5, but the trace has 2 rank files");
}

TEST(ChakraBadTrace, CycleNamesItsNodes) {
  const std::string e = input_error([&] {
    read_chakra_bytes(et_bytes({comp(1, {3}), comp(2, {1}), comp(3, {2}), comp(4)}));
  });
  expect_contains(e,
                  "dependency cycle of 3 nodes: node 1 waits for node 3, which waits for node 2, "
                  "which waits for node 1 again");
  expect_contains(input_error([&] { read_chakra_bytes(et_bytes({comp(9, {9})})); }),
                  "node 9 depends on itself");
}

TEST(ChakraBadTrace, DuplicateIds) {
  const std::string e = input_error([&] { read_chakra_bytes(et_bytes({comp(1), comp(1)})); });
  expect_contains(e, "node id 1 appears twice (records 1 and 2)");
}

TEST(ChakraBadTrace, DanglingDependencyIsWarnedAndIgnored) {
  const ChakraTrace t = read_chakra_bytes(et_bytes({comp(1, {77}), comp(2, {1})}));
  EXPECT_EQ(t.graph.size(), 2u);
  EXPECT_TRUE(t.graph.deps(0).empty());
  EXPECT_EQ(t.summary.dangling_deps, 1u);
  ASSERT_FALSE(t.warnings.empty());
  expect_contains(t.warnings[0], "1 data_deps name nodes that are not in the file (e.g. 77)");
}

TEST(ChakraBadTrace, UnmatchedSendIsReportedWithFileAndNode) {
  TempDir dir;
  write_file(dir, "t.0.et", et_bytes({p2p(1, true, 1, 7, 64), p2p(2, true, 1, 7, 64)}));
  write_file(dir, "t.1.et", et_bytes({p2p(5, false, 0, 7, 64)}));
  const std::string e = input_error([&] { read_chakra_trace((dir.path() / "t").string()); });
  expect_contains(e, "1 send/recv node(s) do not match");
  expect_contains(e, "t.0.et: node 2 (send to rank 1, tag 7, 64 bytes) has no matching recv");
}

TEST(ChakraBadTrace, SendsAndRecvsMatchBySizeToo) {
  // Same (source, destination, tag), two sizes, posted in opposite orders: matched by size.
  TempDir dir;
  write_file(dir, "t.0.et", et_bytes({p2p(1, true, 1, 7, 64), p2p(2, true, 1, 7, 128)}));
  write_file(dir, "t.1.et", et_bytes({p2p(1, false, 0, 7, 128), p2p(2, false, 0, 7, 64)}));
  const ChakraTrace t = read_chakra_trace((dir.path() / "t").string());
  EXPECT_EQ(t.summary.retagged, 2u);
  EXPECT_EQ(t.graph.op(0).tag, t.graph.op(3).tag);  // the 64-byte send and recv
  EXPECT_EQ(t.graph.op(1).tag, t.graph.op(2).tag);
}

TEST(ChakraBadTrace, CollectivesThatDifferBetweenRanks) {
  TempDir dir;
  write_file(dir, "t.0.et", et_bytes({coll(1, 1024)}));
  write_file(dir, "t.1.et", et_bytes({coll(1, 2048)}));
  const std::string e = input_error([&] { read_chakra_trace((dir.path() / "t").string()); });
  expect_contains(e, "collective #1 on process group 'group[2 ranks: 0,1]'");
  expect_contains(e, "t.0.et: node 1 is all_reduce of 1024 bytes but");
  write_file(dir, "u.0.et", et_bytes({coll(1, 1024), coll(2, 1024)}));
  write_file(dir, "u.1.et", et_bytes({coll(1, 1024)}));
  const std::string c = input_error([&] { read_chakra_trace((dir.path() / "u").string()); });
  expect_contains(c, "is issued by 1 of its 2 members");
}

TEST(ChakraBadTrace, JsonErrorsNameTheNode) {
  TempDir dir;
  write_file(dir, "j.0.json",
             R"({"workload_graph": [{"Id": 1, "NodeType": 4}, {"Id": "two", "NodeType": 4}]})");
  expect_contains(input_error([&] { read_chakra_trace((dir.path() / "j").string()); }),
                  "workload_graph[1]: 'Id' is \"two\", expected an unsigned integer");
  write_file(dir, "k.0.json", R"({"workload_graph": [ {"Id": 1, )");
  expect_contains(input_error([&] { read_chakra_trace((dir.path() / "k").string()); }),
                  "is not valid JSON");
}

}  // namespace
}  // namespace racksim::chakra
