// The NIC what-if (hardware.scale_out.treat_all_nics_as_ib) priced on a training step: on two
// seed-like B300 nodes with Ethernet ports 3 and 7, a DP16 step's gradient all-reduce crosses
// the nodes on every ring channel, so its exposed time scales with the ring bound `racksim topo`
// prints (184 GB/s per node with NCCL's choice, 85 GB/s with the what-if).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::TempDir;

// Llama-3 8B cut to 2 layers (the gradients are mostly the embeddings: about 2 GB), pure DP
// over 2 nodes of 8 GPUs.
const char* kScenario =
    R"pb(model { preset: "llama3-8b" num_layers: 2 }
         hardware { preset: "hgx-b300-mixed-nics" nodes: 2 }
         layout { tp: 1 dp: 16 }
         training { global_batch_size: 16 seq_length: 2048 }
    )pb";

TEST(NicWhatIf, MisclassifiedNicsSlowATwoNodeStepByTheRingBounds) {
  TempDir dir;
  auto run = [&](const std::string& what_if) {
    const auto result = testing::run_scenario_report(
        dir, kScenario, {"hardware.scale_out.treat_all_nics_as_ib=" + what_if});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.report;
  };
  const auto nccl = run("false");
  const auto what_if = run("true");
  EXPECT_GT(what_if["step_time_s"].get<double>(), nccl["step_time_s"].get<double>());
  // NCCL's choice: GPUs 2 and 3 share a 400G NIC, 8 channels x 46 / 2 GB/s; the what-if puts
  // GPU 3 on 100 GbE, 8 channels x 10.625 GB/s.
  const double expected_ratio = (8 * 46.0 / 2) / (8 * 10.625);
  const double nccl_dp_s = nccl["breakdown_s"]["exposed_comm"]["dp"].get<double>();
  const double what_if_dp_s = what_if["breakdown_s"]["exposed_comm"]["dp"].get<double>();
  ASSERT_GT(nccl_dp_s, 0);
  EXPECT_NEAR(what_if_dp_s / nccl_dp_s, expected_ratio, 0.05 * expected_ratio);
}

}  // namespace
}  // namespace racksim
