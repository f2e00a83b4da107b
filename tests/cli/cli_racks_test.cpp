// `racksim racks` on a toy MoE (16 experts, EP 16 over 16 GPUs in 4-GPU trays): as the scale-up
// domain grows from 4 to 8 to 16 GPUs, training and decode steps do not get slower, fewer bytes
// cross the domain boundary, and the share that crosses is the closed form (ep - d) / (ep - 1).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "app/studies/racks_study.h"
#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::read_file;
using testing::run_racksim;
using testing::TempDir;

constexpr const char* kToy = R"(name: "toy MoE racks"
model { hidden_size: 256 num_layers: 2 num_heads: 4 ffn_hidden_size: 1024 vocab_size: 256
        num_experts: 16 experts_per_token: 2 moe_ffn_hidden_size: 512 }
hardware { preset: "gb200-nvl72" nodes: 4 }
layout { tp: 1 pp: 1 ep: 16 }
training { global_batch_size: 16 micro_batch_size: 1 seq_length: 128 }
inference { batch: 256 context_tokens: 128 gpu_hour_price: 4 }
)";

TEST(RacksCommand, LargerDomainsNeverSlowAndCrossLess) {
  TempDir dir;
  const std::string scenario = dir.write("toy.textproto", kToy);
  const auto out = dir.path() / "out";
  const auto r = run_racksim(
      {"racks", scenario, "--scale-up", "4,8,16", "--jobs", "2", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(read_file(out / "racks.json"));
  const auto& rows = j["rows"];
  ASSERT_EQ(rows.size(), 3u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& d = rows[i]["decode"];
    const int domain = rows[i]["domain_size"].get<int>();
    EXPECT_NEAR(d["crossing_share"].get<double>(), app::network_crossing_share(16, domain), 1e-9)
        << domain;
    if (i == 0) continue;
    const auto& prev = rows[i - 1];
    EXPECT_LE(d["step_time_s"].get<double>(),
              prev["decode"]["step_time_s"].get<double>() * (1 + 1e-9));
    EXPECT_LE(rows[i]["training_step_s"].get<double>(),
              prev["training_step_s"].get<double>() * (1 + 1e-9));
    EXPECT_LT(d["scale_out_bytes"].get<double>(), prev["decode"]["scale_out_bytes"].get<double>());
  }
  // EP fits in the 16-GPU domain: nothing leaves it, and the decode is strictly faster than
  // with EP across four 4-GPU domains.
  EXPECT_EQ(rows[2]["decode"]["scale_out_bytes"].get<double>(), 0);
  EXPECT_LT(rows[2]["decode"]["step_time_s"].get<double>(),
            rows[0]["decode"]["step_time_s"].get<double>());
  EXPECT_NE(read_file(out / "racks.svg").find("ep=16"), std::string::npos);
}

// ANALYTIC collectives run no flows but still count their bytes per rank pair: the decode's
// bytes inside and across domains equal AGGREGATED's, and its step stays within 5 % of it.
TEST(RacksCommand, AnalyticDecodeCountsTheSameBytesAsFlows) {
  TempDir dir;
  const std::string scenario = dir.write("toy.textproto", kToy);
  std::vector<nlohmann::json> rows;
  for (const char* fidelity : {"AGGREGATED", "ANALYTIC"}) {
    const auto out = dir.path() / fidelity;
    const auto r = run_racksim({"racks", scenario, "--scale-up", "4,12", "--no-training",
                                "--decode-fidelity", fidelity, "--out", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    rows.push_back(nlohmann::json::parse(read_file(out / "racks.json"))["rows"]);
  }
  for (size_t i = 0; i < 2; ++i) {
    const auto& flows = rows[0][i]["decode"];
    const auto& analytic = rows[1][i]["decode"];
    EXPECT_NEAR(analytic["scale_out_bytes"].get<double>(), flows["scale_out_bytes"].get<double>(),
                1e-6 * flows["scale_out_bytes"].get<double>() + 1);
    EXPECT_NEAR(analytic["scale_up_bytes"].get<double>(), flows["scale_up_bytes"].get<double>(),
                1e-6 * flows["scale_up_bytes"].get<double>() + 1);
    EXPECT_NEAR(analytic["step_time_s"].get<double>(), flows["step_time_s"].get<double>(),
                0.05 * flows["step_time_s"].get<double>());
    // 16 ranks in domains of 12: 12 and 4, so (12 x 4 + 4 x 12) / (16 x 15) = 40 % crosses.
    EXPECT_NEAR(analytic["crossing_share"].get<double>(),
                app::network_crossing_share(16, rows[1][i]["domain_size"].get<int>()), 1e-9);
  }
}

TEST(RacksCommand, ABadFidelityIsAnInputError) {
  TempDir dir;
  const std::string scenario = dir.write("toy.textproto", kToy);
  const auto out = dir.path() / "out";
  const auto r =
      run_racksim({"racks", scenario, "--decode-fidelity", "FAST", "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--decode-fidelity"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("domain"), std::string::npos) << "no table on bad input";
  EXPECT_FALSE(std::filesystem::exists(out / "racks.json"));
}

TEST(RacksCommand, NetworkCrossingShareClosedForm) {
  EXPECT_DOUBLE_EQ(app::network_crossing_share(64, 8), 56.0 / 63);
  EXPECT_DOUBLE_EQ(app::network_crossing_share(64, 72), 0);
  EXPECT_DOUBLE_EQ(app::network_crossing_share(256, 128), 128.0 / 255);  // about half: the lecture
  // A partial last domain: 256 ranks in domains of 72 (72, 72, 72, 40).
  EXPECT_DOUBLE_EQ(app::network_crossing_share(256, 72),
                   (3 * 72.0 * 184 + 40.0 * 216) / (256.0 * 255));
  EXPECT_DOUBLE_EQ(app::network_crossing_share(16, 12), 96.0 / 240);
}

}  // namespace
}  // namespace racksim
