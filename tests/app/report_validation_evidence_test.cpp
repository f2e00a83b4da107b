// The validation evidence a training report prints ("How far to trust it"): the compiled-in
// rows match the README's table for the configurations it validates, nothing else matches, and
// each configuration's clock ratio is the one its preset or calibration file actually runs at,
// so a report never shows rows of another configuration.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "analysis/validation_evidence.h"
#include "config/hardware_loader.h"

namespace racksim {
namespace {

using analysis::HardwareConfiguration;
using analysis::validated_configurations;
using analysis::validation_evidence;

TEST(ValidationEvidence, HopperFp8AtTheHeldRateShowsTheReadmesRows) {
  const auto h100 = validation_evidence({"dgx-h100", "", 0.862, "FP8"});
  ASSERT_EQ(h100.checks.size(), 2u);
  EXPECT_EQ(h100.checks[0].rows, 5);
  EXPECT_NEAR(h100.checks[0].mape_percent, 4.5, 0.06);
  EXPECT_EQ(h100.checks[1].rows, 11);
  EXPECT_NEAR(h100.checks[1].mape_percent, 5.5, 0.06);
  EXPECT_NEAR(h100.checks[1].worst_percent, -13.3, 0.05);
  const auto h800 = validation_evidence({"hgx-h800", "", 0.862, "FP8"});
  ASSERT_EQ(h800.checks.size(), 1u);
  EXPECT_NEAR(h800.checks[0].worst_percent, -6.0, 0.05);
}

TEST(ValidationEvidence, TheA100CalibrationShowsItsFitsAndSaysWhichItSaw) {
  const auto a100 =
      validation_evidence({"dgx-a100", "a100-kernel-calibration.textproto", 1, "16-bit"});
  ASSERT_EQ(a100.checks.size(), 4u);
  EXPECT_NEAR(a100.checks[0].mape_percent, 6.1, 0.06);  // Narayanan et al., another cluster
  EXPECT_FALSE(a100.checks[0].in_sample);
  EXPECT_EQ(a100.checks[2].rows, 1296);  // the single-node rows outside the fit
  EXPECT_FALSE(a100.checks[2].in_sample);
  EXPECT_TRUE(a100.checks[3].in_sample);  // the multi-node step cost was fitted on these
}

TEST(ValidationEvidence, ConfigurationsNothingValidatesHaveNoRows) {
  EXPECT_TRUE(validation_evidence({"b300", "", 0.862, "FP8"}).checks.empty());
  EXPECT_TRUE(validation_evidence({"dgx-h100", "", 0.862, "16-bit"}).checks.empty());  // BF16
  EXPECT_TRUE(validation_evidence({"dgx-h100", "", 0.9, "FP8"}).checks.empty());
  EXPECT_TRUE(validation_evidence({"dgx-a100", "my-fit.textproto", 1, "16-bit"}).checks.empty());
  EXPECT_TRUE(validation_evidence({"", "", 1, "16-bit"}).checks.empty());  // custom nodes
}

// The held rows are keyed on the ratio the preset itself sets: were a preset's ratio to change,
// its reports would otherwise show rows measured at another rate.
TEST(ValidationEvidence, HeldRatiosAreThePresetsOwn) {
  int held = 0;
  for (const HardwareConfiguration& c : validated_configurations()) {
    if (!c.calibration.empty() || c.sustained_clock_ratio == 1) continue;
    const auto loaded = config::load_hardware_preset(c.preset, 0, {});
    EXPECT_NEAR(loaded.scenario.hardware().compute().sustained_clock_ratio(),
                c.sustained_clock_ratio, 1e-9)
        << c.preset;
    ++held;
  }
  EXPECT_GE(held, 3);  // dgx-a100, dgx-h100, hgx-h800
}

TEST(ValidationEvidence, CalibrationFilesSetTheRatioTheirRowsAreKeyedOn) {
  int files = 0;
  for (const HardwareConfiguration& c : validated_configurations()) {
    if (c.calibration.empty()) continue;
    std::ifstream in(std::string(RACKSIM_SOURCE_DIR) + "/scenarios/calibration/" + c.calibration);
    ASSERT_TRUE(in) << c.calibration;
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("sustained_clock_ratio: 1\n"), std::string::npos) << c.calibration;
    EXPECT_EQ(c.sustained_clock_ratio, 1);
    ++files;
  }
  EXPECT_EQ(files, 1);
}

}  // namespace
}  // namespace racksim
