// The calibrated a100-vtrain-cluster preset against three of the quickest vTrain rows
// (scenarios/calibration/a100-vtrain-results.csv has them all): the error racksim has with the
// preset's fitted kernel-model terms is pinned, so a change to the compute model, the
// collectives or the workload that moves these predictions shows up here (and the table and
// docs/analysis.md need a rerun of scripts/a100-vtrain-table.py).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::simulated_step_s;

const std::string kBase =
    std::string(RACKSIM_SOURCE_DIR) + "/scenarios/calibration/a100-vtrain-base.textproto";

struct Row {
  std::vector<std::string> sets;
  double measured_s;
  // simulated / measured - 1 as recorded when the preset took the kernel model's fitted terms
  // (the roofline fit before it, made on eleven 3.6B rows and the 18.4B one here, gave +1.2,
  // +2.5 and +33.7 %), the pipelined rows since in DeepSpeed's TrainSchedule (+5.9 and +3.8 %
  // in Megatron's exchange).
  double recorded_error;
};

// Each run is a second or less (TP1, few micro-batches).
TEST(A100Vtrain, CalibratedErrorOnQuickRowsIsPinned) {
  const std::vector<std::string> gpt_18b = {
      "model.hidden_size=6144",      "model.num_heads=48", "model.num_layers=40",
      "model.ffn_hidden_size=24576", "hardware.nodes=32",  "training.global_batch_size=1024"};
  std::vector<Row> rows = {
      // 3.6B, TP1 PP1 DP64, micro-batch 8
      {{"layout.tp=1", "layout.pp=1", "layout.dp=64", "training.micro_batch_size=8"},
       3.5665,
       0.0752},
      // 3.6B, TP1 PP2 DP32, micro-batch 2
      {{"layout.tp=1", "layout.pp=2", "layout.dp=32", "training.micro_batch_size=2"},
       4.0349,
       0.0611},
  };
  // 18.4B, TP1 PP8 DP32, micro-batch 4: a third too slow under the roofline fit, now as close as
  // the 3.6B rows.
  Row big{gpt_18b, 12.379, 0.0421};
  for (const char* set :
       {"layout.tp=1", "layout.pp=8", "layout.dp=32", "training.micro_batch_size=4"}) {
    big.sets.push_back(set);
  }
  rows.push_back(big);
  for (const Row& row : rows) {
    const double error = simulated_step_s(kBase, row.sets) / row.measured_s - 1;
    // The model is deterministic: the tolerance covers rounding of the recorded value only.
    EXPECT_NEAR(error, row.recorded_error, 0.005) << row.sets[0] << " " << row.sets[1];
  }
}

}  // namespace
}  // namespace racksim
