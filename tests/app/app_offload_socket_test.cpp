// hardware.host.offload_socket pins the host memory of offloaded optimizer states to one socket
// (NUMA node) of each server: the copies of GPUs on the other socket then also cross the
// inter-socket link, and the simulated step says what that costs.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "config/scenario_loader.h"
#include "tests/support/run_racksim.h"
#include "workloads/training/training_step.h"

namespace racksim {
namespace {

using testing::run_racksim;
using testing::TempDir;

// Llama-3 8B cut to 2 layers on one DGX H100 (2 sockets, GPUs 0-3 on socket 0), TP2 DP4, with
// the optimizer offloaded to the CPUs.
const char* kScenario =
    R"pb(model { preset: "llama3-8b" num_layers: 2 }
         hardware { preset: "dgx-h100" }
         layout { tp: 2 dp: 4 }
         training { global_batch_size: 4 seq_length: 2048 offload_optimizer: true }
    )pb";

// The NUMA node of every copy of each rank.
std::map<RankId, std::set<uint32_t>> copy_sockets(const std::vector<std::string>& overrides) {
  const config::LoadedScenario loaded =
      config::load_scenario_text(kScenario, "s.textproto", overrides);
  const TrainingStep step = build_training_step(resolve_training_plan(loaded.scenario));
  std::map<RankId, std::set<uint32_t>> sockets;
  for (const Op& op : step.graph.ops()) {
    if (op.kind == OpKind::kCopy) sockets[op.rank].insert(op.peer);
  }
  return sockets;
}

TEST(OffloadSocket, CopiesGoToTheGpusOwnSocketByDefault) {
  const auto sockets = copy_sockets({});
  ASSERT_EQ(sockets.size(), 8u);
  for (const auto& [rank, numa] : sockets) {
    EXPECT_EQ(numa, (std::set<uint32_t>{rank < 4 ? 0u : 1u})) << "rank " << rank;
  }
}

TEST(OffloadSocket, PinnedCopiesGoToThatSocket) {
  const auto sockets = copy_sockets({"hardware.host.offload_socket=0"});
  ASSERT_EQ(sockets.size(), 8u);
  for (const auto& [rank, numa] : sockets) {
    EXPECT_EQ(numa, (std::set<uint32_t>{0u})) << "rank " << rank;
  }
}

TEST(OffloadSocket, ASocketTheNodeLacksIsABadInput) {
  try {
    config::load_scenario_text(kScenario, "s.textproto", {"hardware.host.offload_socket=2"});
    FAIL() << "socket 2 of a 2-socket node was accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), "hardware.host.offload_socket");
    EXPECT_NE(error.detail().find("2 socket(s)"), std::string::npos) << error.detail();
  }
}

// Copies of GPUs 4-7 into socket 0 share the inter-socket link instead of each using its own
// PCIe path to its socket. On a DGX H100 that link (128 GB/s x 0.85) carries what the socket's
// two PCIe switch uplinks (2 x 63 GB/s x 0.85) bring, so only its latency shows; at 32 GB/s
// (27.2 GB/s after efficiency, shared by 4 GPUs: 6.8 GB/s each) the offload copies, which the
// critical path waits for, take 26.775 / 6.8 = 3.94 times as long as over the GPU's own
// switch (2 GPUs per switch uplink: 26.775 GB/s each).
TEST(OffloadSocket, PinningToTheOtherSocketCostsWhatTheInterSocketLinkAllows) {
  TempDir dir;
  const std::string scenario = dir.write("s.textproto", kScenario);
  auto run = [&](const std::string& name, const std::vector<std::string>& extra) {
    std::vector<std::string> args{"run",
                                  scenario,
                                  "--report-only",
                                  "--out",
                                  (dir.path() / name).string(),
                                  "--set",
                                  "hardware.host.inter_socket_bytes_per_s=32e9"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto result = run_racksim(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return nlohmann::json::parse(testing::read_file(dir.path() / name / "report.json"));
  };
  const auto own = run("own", {});
  const auto pinned = run("pinned", {"--set", "hardware.host.offload_socket=0"});
  const double own_offload_s = own["critical_path"]["by_kind_s"]["offload"].get<double>();
  const double pinned_offload_s = pinned["critical_path"]["by_kind_s"]["offload"].get<double>();
  ASSERT_GT(own_offload_s, 0);
  const double expected_ratio = (63e9 * 0.85 / 2) / (32e9 * 0.85 / 4);
  EXPECT_NEAR(pinned_offload_s / own_offload_s, expected_ratio, 0.01 * expected_ratio);
  EXPECT_GT(pinned["step_time_s"].get<double>(), own["step_time_s"].get<double>());
  EXPECT_GE(pinned["breakdown_s"]["rank"].get<int>(), 4) << "a GPU of socket 1 ends last";
}

}  // namespace
}  // namespace racksim
