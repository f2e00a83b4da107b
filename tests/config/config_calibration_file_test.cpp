// A calibration file included by a scenario (`calibration: "..."`) is a file of its own: a
// relative path it names is read from its folder, not from the including scenario's, and an error
// on a field it wrote names it, its line and the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "config/scenario_loader.h"
#include "tests/support/run_racksim.h"
#include "tests/support/scenario_errors.h"

namespace racksim::config {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

constexpr const char* kScenario = R"(model { preset: "llama3-8b" }
hardware { preset: "dgx-h100" }
training { global_batch_size: 16 seq_length: 2048 }
calibration: "../fits/cal.textproto"
)";

// runs/scenario.textproto includes fits/cal.textproto, which names fits/nccl.csv as "nccl.csv".
struct Tree {
  TempDir dir;
  std::string scenario;
  Tree(const std::string& calibration) {
    fs::create_directories(dir.path() / "runs");
    fs::create_directories(dir.path() / "fits");
    scenario = dir.write("runs/scenario.textproto", kScenario);
    dir.write("fits/cal.textproto", calibration);
    dir.write("fits/nccl.csv", "gpus,size_bytes,time_us\n2,1048576,50\n2,2097152,80\n");
  }
};

TEST(CalibrationFile, ARelativePathItNamesIsReadFromItsOwnFolder) {
  const Tree tree(
      "# racksim calibration\nhardware { collectives { measured_table: \"nccl.csv\" } }\n");
  const LoadedScenario loaded = load_scenario(tree.scenario, {});
  EXPECT_EQ(fs::path(loaded.scenario.hardware().collectives().measured_table()).lexically_normal(),
            (tree.dir.path() / "fits" / "nccl.csv").lexically_normal());
  EXPECT_FALSE(loaded.measured_collectives.empty());
}

TEST(CalibrationFile, AnErrorOnAFieldItWroteNamesItsLine) {
  const Tree tree("# racksim calibration\nhardware {\n  compute { gemm: 1.5 }\n}\n");
  const Caught caught = catch_input_error([&] { load_scenario(tree.scenario, {}); });
  ASSERT_TRUE(caught.thrown);
  EXPECT_EQ(caught.field, "hardware.compute.gemm");
  EXPECT_EQ(fs::path(caught.where.file).filename(), "cal.textproto");
  EXPECT_EQ(caught.where.line, 3);
}

}  // namespace
}  // namespace racksim::config
