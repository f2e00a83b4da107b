// Token routing samples (expert_placement.token_routing_file): reading with file:line errors,
// shares and co-occurrence, the node copies a node-deduplicated dispatch sends per token against
// hand counts, and `racksim infer` comparing co-occurrence placement with the others.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "tests/support/run_racksim.h"
#include "workloads/moe/token_routing.h"

namespace racksim {
namespace {

using testing::read_file;
using testing::run_racksim;
using testing::TempDir;

constexpr const char* kField = "expert_placement.token_routing_file";

TEST(TokenRouting, ReadsSharesAndPairs) {
  TempDir dir;
  const auto path = dir.write("r.txt", "# two tokens\n0 1\n\n1,3\n");
  const TokenRouting r = read_token_routing(path, 4, 2, kField);
  ASSERT_EQ(r.tokens.size(), 2u);
  EXPECT_EQ(token_shares(r), (std::vector<double>{0.25, 0.5, 0, 0.25}));
  const CoOccurrence co = token_cooccurrence(r);
  EXPECT_EQ(co[0][1], 1);
  EXPECT_EQ(co[3][1], 1);
  EXPECT_EQ(co[0][3], 0);
}

void expect_error(const std::string& text, int line, const std::string& detail) {
  TempDir dir;
  const auto path = dir.write("r.txt", text);
  try {
    read_token_routing(path, 4, 2, kField);
    FAIL() << "no error for " << text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, path);
    EXPECT_EQ(e.where().line, line);
    EXPECT_EQ(e.field(), kField);
    EXPECT_NE(e.detail().find(detail), std::string::npos) << e.detail();
  }
}

TEST(TokenRouting, BadLinesNameTheirLine) {
  expect_error("0 1\n0 4\n", 2, "'4' is not an expert id in [0, 4)");
  expect_error("0 x\n", 1, "'x' is not an expert id");
  expect_error("0 1\n2 2\n", 2, "expert 2 appears twice");
  expect_error("0 1 2\n", 1, "experts_per_token = 2 experts; this line has 3");
  expect_error("# nothing\n", 0, "no tokens");
}

TEST(TokenRouting, NodeDedupCountsDestinationNodesOnce) {
  // 4 experts on 2 nodes of one rank; every token picks experts 0 and 1.
  TempDir dir;
  const TokenRouting r = read_token_routing(dir.write("r.txt", "0 1\n"), 4, 2, kField);
  // Contiguous: 0 and 1 on node 0. Node 0's senders send nothing off-node, node 1's one copy.
  EXPECT_DOUBLE_EQ(remote_domain_copies_per_token(contiguous_placement(4, 2), r, 1), 0.5);
  // Split (0, 2 on node 0; 1, 3 on node 1): each sender reaches the other node once.
  ExpertPlacementMap split = contiguous_placement(4, 2);
  split.share = {{1, 0}, {0, 1}, {1, 0}, {0, 1}};
  EXPECT_DOUBLE_EQ(remote_domain_copies_per_token(split, r, 1), 1.0);
  // Four nodes of one expert each: a token reaches 2 nodes, 1 or 2 of them remote.
  EXPECT_DOUBLE_EQ(remote_domain_copies_per_token(contiguous_placement(4, 4), r, 1),
                   (1 + 1 + 2 + 2) / 4.0);
}

TEST(TokenRouting, DedupMatrixLandsOnTheSendersRailAndForwards) {
  // 8 experts on 2 nodes of 2 ranks (experts 2r, 2r + 1 on rank r); the token picks experts 4
  // and 6, served by ranks 2 and 3 on node 1.
  TempDir dir;
  const TokenRouting r = read_token_routing(dir.write("r.txt", "4 6\n"), 8, 2, kField);
  const auto m = dedup_dispatch_matrix(contiguous_placement(8, 4), r, 2);
  ASSERT_EQ(m.size(), 16u);
  auto at = [&](int i, int j) { return m[i * 4 + j]; };
  // Per byte of a sender's one-copy-per-expert dispatch (2 copies per token):
  EXPECT_DOUBLE_EQ(at(0, 2), 0.5);  // rank 0 (rail 0): one copy to node 1, landing on rank 2
  EXPECT_DOUBLE_EQ(at(0, 3), 0.0);  // ... not a second one to rank 3
  EXPECT_DOUBLE_EQ(at(1, 3), 0.5);  // rank 1 (rail 1) lands on rank 3
  // Rank 2 forwards rank 0's token to rank 3 and sends its own there: 2 x 0.5.
  EXPECT_DOUBLE_EQ(at(2, 3), 1.0);
  EXPECT_DOUBLE_EQ(at(3, 2), 1.0);
  EXPECT_DOUBLE_EQ(at(0, 1) + at(1, 0) + at(2, 0) + at(3, 1), 0.0);
}

TEST(TokenRouting, DedupMatrixWrapsRailsInAPartialLastDomain) {
  // 6 experts on 3 ranks in domains of 2: {0, 1} and a partial {2}. A token of experts 1 and 4
  // (ranks 0 and 2) sent from rank 1 (rail 1) lands on rank 2, the partial domain's only GPU.
  TempDir dir;
  const TokenRouting r = read_token_routing(dir.write("r.txt", "1 4\n"), 6, 2, kField);
  const auto m = dedup_dispatch_matrix(contiguous_placement(6, 3), r, 2);
  EXPECT_DOUBLE_EQ(m[1 * 3 + 2], 0.5);
  EXPECT_DOUBLE_EQ(m[1 * 3 + 0], 0.5);  // expert 1 on rank 0, inside the sender's domain
}

// 16 experts on 2 nodes; every token chooses a pair (e, e + 8) that contiguous placement splits
// over the two nodes.
constexpr const char* kMoe = R"(name: "toy co-occurrence"
model { hidden_size: 256 num_layers: 2 num_heads: 4 ffn_hidden_size: 1024 vocab_size: 256
        num_experts: 16 experts_per_token: 2 moe_ffn_hidden_size: 512 }
hardware { preset: "dgx-h100" nodes: 2 }
layout { tp: 1 pp: 1 ep: 16 }
training { global_batch_size: 16 micro_batch_size: 1 seq_length: 128 }
sim { fidelity: ANALYTIC }
expert_placement { strategy: BY_COOCCURRENCE token_routing_file: "routing.txt" }
inference { batch: 64 context_tokens: 128 }
)";

TEST(TokenRouting, InferComparesCoOccurrencePlacement) {
  TempDir dir;
  std::string sample;
  for (int e = 0; e < 8; ++e) sample += std::to_string(e) + " " + std::to_string(e + 8) + "\n";
  dir.write("routing.txt", sample);  // relative to the scenario
  const auto scenario = dir.write("moe.textproto", kMoe);
  const auto out = dir.path() / "out";
  const auto r = run_racksim({"infer", scenario, "--batch", "64", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(read_file(out / "infer.json"));
  double contiguous = -1, cooccurrence = -1;
  for (const auto& row : j["placement"]) {
    if (row["map"] == "contiguous") contiguous = row["remote_domains_per_token"].get<double>();
    if (row["map"] == "by co-occurrence")
      cooccurrence = row["remote_domains_per_token"].get<double>();
  }
  EXPECT_DOUBLE_EQ(contiguous, 1.0);    // every pair split: every token crosses once
  EXPECT_DOUBLE_EQ(cooccurrence, 0.5);  // pairs kept together: the other node's senders cross
}

// The decode step with node_dedup_dispatch: co-occurrence placement halves the bytes that cross
// nodes (half the senders reach the pair's node once) against contiguous placement, whose
// split pairs cross once per token with or without deduplication.
TEST(TokenRouting, DedupDispatchInTheDecodeStep) {
  TempDir dir;
  std::string sample;
  for (int e = 0; e < 8; ++e) sample += std::to_string(e) + " " + std::to_string(e + 8) + "\n";
  dir.write("routing.txt", sample);
  const auto scenario = dir.write("moe.textproto", kMoe);
  auto scale_out = [&](const std::string& strategy, bool dedup) {
    const auto out = dir.path() / (strategy + (dedup ? "-dedup" : ""));
    const auto r = run_racksim(
        {"infer", scenario, "--batch", "64", "--out", out.string(), "--set",
         "expert_placement.strategy=" + strategy, "--set",
         std::string("expert_placement.node_dedup_dispatch=") + (dedup ? "true" : "false")});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto j = nlohmann::json::parse(read_file(out / "infer.json"));
    return j["points"][0]["scale_out_bytes"].get<double>();
  };
  const double contiguous = scale_out("CONTIGUOUS", true);
  EXPECT_GT(contiguous, 0);
  EXPECT_NEAR(scale_out("CONTIGUOUS", false), contiguous, 1e-9 * contiguous);
  EXPECT_NEAR(scale_out("BY_COOCCURRENCE", true), 0.5 * contiguous, 1e-9 * contiguous);
}

TEST(TokenRouting, CoOccurrenceWithoutASampleAndBadSampleLinesExitTwo) {
  TempDir dir;
  std::string text = kMoe;
  const auto no_file = dir.write(
      "a.textproto", text.replace(text.find(" token_routing_file: \"routing.txt\""),
                                  std::string(" token_routing_file: \"routing.txt\"").size(), ""));
  auto r = run_racksim({"infer", no_file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expert_placement.strategy"), std::string::npos) << r.err;
  dir.write("routing.txt", "0 8\n3 99\n");
  r = run_racksim({"infer", dir.write("b.textproto", kMoe)});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("routing.txt:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kField), std::string::npos) << r.err;
}

}  // namespace
}  // namespace racksim
