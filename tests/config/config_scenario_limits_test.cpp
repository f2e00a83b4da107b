// The checks every scenario field gets (config/scenario_limits.h): non-finite and out-of-range
// numbers, int64 overflow in products of sizes, enum values that are not defined, negative
// counts and invalid UTF-8 all fail at load time naming the field, before any simulation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "config/scenario_loader.h"
#include "tests/support/test_scenarios.h"

namespace racksim::config {
namespace {

constexpr const char* kScenario = testing::kSmallDense;

// The field an InputError names when the scenario (with `extra` appended and `sets` applied)
// is loaded; "" when it loads.
std::string failing_field(const std::string& extra, const std::vector<std::string>& sets = {},
                          std::string* detail = nullptr) {
  try {
    config::load_scenario_text(std::string(kScenario) + extra, "limits.textproto", sets);
  } catch (const InputError& e) {
    if (detail != nullptr) *detail = e.detail();
    return e.field();
  }
  return "";
}

TEST(ScenarioLimits, TheBaseScenarioLoads) {
  EXPECT_EQ(failing_field(""), "");
}

struct Case {
  const char* name;
  std::vector<std::string> sets;
  const char* field;
};

class BadValue : public ::testing::TestWithParam<Case> {};

TEST_P(BadValue, NamesTheField) {
  std::string detail;
  EXPECT_EQ(failing_field("", GetParam().sets, &detail), GetParam().field) << detail;
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, BadValue,
    ::testing::Values(
        Case{"InfiniteFlops",
             {"hardware.gpu.bf16_flops_per_s=inf"},
             "hardware.gpu.bf16_flops_per_s"},
        Case{"NanEfficiency", {"hardware.compute.gemm=nan"}, "hardware.compute.gemm"},
        Case{"TinyRate", {"hardware.scale_up.bytes_per_s=1e-300"}, "hardware.scale_up.bytes_per_s"},
        Case{"HugeRate", {"hardware.pcie.bytes_per_s=1e300"}, "hardware.pcie.bytes_per_s"},
        Case{"HugeLatency", {"hardware.scale_up.latency_s=1e9"}, "hardware.scale_up.latency_s"},
        Case{"SeqLengthTwoToThe62",
             {"training.seq_length=4611686018427387904"},
             "training.seq_length"},
        Case{"TokensPerStepOverflow",
             {"training.seq_length=67108864", "training.global_batch_size=67108864"},
             "training.seq_length"},
        Case{"UndefinedRecompute", {"training.recompute=99"}, "training.recompute"},
        Case{"UndefinedFidelity", {"sim.fidelity=7"}, "sim.fidelity"},
        Case{"NegativeIndexerChunk",
             {"training.indexer_chunk_tokens=-1"},
             "training.indexer_chunk_tokens"},
        Case{"NegativeExperts", {"model.num_experts=-4"}, "model.num_experts"},
        Case{"InvalidUtf8Name", {"name=\xff\xfe"}, "name"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ScenarioLimits, AnUndefinedEnumInTheFileNamesItsLine) {
  std::string text = std::string(kScenario) + "sim { fidelity: 9 }\n";
  text.replace(text.find("seq_length: 2048"), 16, "seq_length: 2048 recompute: 99");
  try {
    config::load_scenario_text(text, "limits.textproto", {});
    FAIL() << "loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "training.recompute");  // the first of the two bad fields
    EXPECT_EQ(e.where().line, 8);
  }
}

TEST(ScenarioLimits, ABadEnumNameFollowedByAnotherFieldNamesTheEnum) {
  for (const char* edit : {"seq_length: 2048 recompute: BOGUS zero_stage: 1",
                           "seq_length: 2048 zero_stage: 1 recompute: BOGUS",
                           "seq_length: 2048 pp_comm_overlap: maybe zero_stage: 1"}) {
    std::string text = kScenario;
    text.replace(text.find("seq_length: 2048"), 16, edit);
    try {
      config::load_scenario_text(text, "limits.textproto", {});
      ADD_FAILURE() << "loaded " << edit;
    } catch (const InputError& e) {
      const std::string expected = std::string(edit).find("maybe") != std::string::npos
                                       ? "training.pp_comm_overlap"
                                       : "training.recompute";
      EXPECT_EQ(e.field(), expected) << edit << ": " << e.what();
      EXPECT_EQ(e.where().line, 8) << edit;
    }
  }
}

TEST(ScenarioLimits, AnUndefinedEnumInJsonIsRefused) {
  const std::string json = R"({"model": {"preset": "llama3-8b", "num_layers": 8},
  "hardware": {"preset": "dgx-h100", "nodes": 1},
  "layout": {"tp": 2, "pp": 2, "dp": 2},
  "training": {"global_batch_size": 8, "seq_length": 2048, "recompute": 99, "zero_stage": 1}})";
  try {
    config::load_scenario_text(json, "limits.json", {});
    FAIL() << "loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "training.recompute");
  }
}

TEST(ScenarioLimits, InvalidUtf8InTheFileIsRefused) {
  EXPECT_EQ(failing_field("description: \"caf\\351\"\n"), "description");
  EXPECT_EQ(failing_field("description: \"caf\xc3\xa9\"\n"), "");  // well-formed UTF-8 is fine
}

TEST(ScenarioLimits, DocumentedBoundsAreInclusive) {
  EXPECT_EQ(failing_field("", {"hardware.scale_up.bytes_per_s=1e21"}), "");
  EXPECT_EQ(failing_field("", {"training.seq_length=67108864", "layout.cp=1"}), "");
  EXPECT_EQ(failing_field("", {"training.seq_length=67108865"}), "training.seq_length");
  EXPECT_EQ(failing_field("", {"training.routing_seed=-5"}), "");  // any seed is a seed
}

}  // namespace
}  // namespace racksim::config
