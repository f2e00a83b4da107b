// The floor under any model whose step time does not rise with the micro-batch (without
// pipeline stages): zero for measurements that fall with it, the least summed relative error
// for those that do not, nothing drawn across families or for pipelined rows.
#include <gtest/gtest.h>

#include "analysis/measurement_floor.h"

namespace racksim {
namespace {

using analysis::micro_batch_floor;
using analysis::MicroBatchRow;

TEST(MicroBatchFloor, MeasurementsThatFallWithTheMicroBatchCostNothing) {
  const auto floor = micro_batch_floor(
      {{"a", 2, false, 8.0}, {"a", 4, false, 5.0}, {"a", 8, false, 5.0}, {"a", 16, false, 4.9}});
  EXPECT_EQ(floor.families, 1u);
  EXPECT_EQ(floor.families_broken, 0u);
  EXPECT_EQ(floor.mean_abs_relative, 0);
  EXPECT_EQ(floor.closest_s, (std::vector<double>{8.0, 5.0, 5.0, 4.9}));
}

// vTrain's 3.6B TP8 rows at micro-batch 32 and 64 (4.972 s and 9.839 s): a model that does not
// slow down gives both at most 4.972 s at best, and the error falls on the slower row alone:
// 1 - 4.972 / 9.839 = 49.5 %.
TEST(MicroBatchFloor, ARowSlowerAtALargerMicroBatchSetsTheFloor) {
  const std::vector<MicroBatchRow> rows = {{"3.6B TP8", 64, false, 9.8389},
                                           {"3.6B TP8", 16, false, 5.0178},
                                           {"3.6B TP8", 32, false, 4.9723},
                                           {"other", 4, false, 3.0}};
  const auto floor = micro_batch_floor(rows);
  EXPECT_EQ(floor.families, 1u);  // "other" has one row: nothing to compare
  EXPECT_EQ(floor.families_broken, 1u);
  EXPECT_DOUBLE_EQ(floor.closest_s[0], 4.9723);
  EXPECT_DOUBLE_EQ(floor.closest_s[1], 5.0178);
  EXPECT_DOUBLE_EQ(floor.closest_s[2], 4.9723);
  EXPECT_DOUBLE_EQ(floor.closest_s[3], 3.0);
  EXPECT_NEAR(floor.mean_abs_relative, (1 - 4.9723 / 9.8389) / 4, 1e-12);
}

// Three rows falling, one rising between them: lowering the one outlier (or raising its
// neighbour) is the cheapest, whichever costs less relative to its own measurement.
TEST(MicroBatchFloor, TheCheapestConsistentSequenceIsChosen) {
  const auto floor = micro_batch_floor({{"f", 2, false, 10.4533},
                                        {"f", 4, false, 9.9276},
                                        {"f", 8, false, 9.6036},
                                        {"f", 16, false, 10.5066}});
  EXPECT_DOUBLE_EQ(floor.closest_s[3], 9.6036);
  EXPECT_DOUBLE_EQ(floor.closest_s[2], 9.6036);
  EXPECT_NEAR(floor.mean_abs_relative * 4, 1 - 9.6036 / 10.5066, 1e-12);
}

TEST(MicroBatchFloor, PipelinedRowsAndRepeatedMeasurements) {
  // A bubble that grows with the micro-batch may slow a pipelined step down: no bound there.
  const auto pipelined = micro_batch_floor(
      {{"pp2", 2, true, 10.03}, {"pp2", 4, true, 10.95}, {"pp2", 8, true, 10.86}});
  EXPECT_EQ(pipelined.families, 0u);
  EXPECT_EQ(pipelined.mean_abs_relative, 0);
  // Two measurements of one layout cannot both be matched: the floor is their spread.
  const auto repeated = micro_batch_floor({{"r", 4, false, 1.0}, {"r", 4, false, 1.1}});
  EXPECT_EQ(repeated.families_broken, 1u);
  EXPECT_NEAR(repeated.mean_abs_relative * 2, 1 - 1.0 / 1.1, 1e-12);
  const auto both =
      micro_batch_floor({{"r", 4, false, 1.0}, {"r", 4, false, 1.1}, {"r", 8, false, 0.9}});
  EXPECT_EQ(both.families_broken, 1u);
  EXPECT_NEAR(both.mean_abs_relative * 3, std::min(0.1 / 1.1, 0.1 / 1.0), 1e-12);
}

}  // namespace
}  // namespace racksim
