// The Blackwell presets' attention share against NVIDIA's published cuDNN training benchmark on a
// GB200 and a GB300 (data/measured/cudnn-sdpa-gb200-gb300.csv): racksim times an attention kernel
// pair (forward, and a backward of 2.5 forward FLOPs) at one fraction of the BF16 peak, so the
// presets hold the pair's measured fraction, read as the H200's was (4K to 16K tokens).
#include <gtest/gtest.h>

#include <string>

#include "tests/support/csv_rows.h"
#include "topologies/hardware_presets.h"

namespace racksim::sim {
namespace {

// The forward and backward pair's share of `peak_flops_per_s` at `seq` tokens on `gpu`.
double measured_fraction(const std::string& gpu, int seq, double peak_flops_per_s) {
  const std::string path =
      std::string(RACKSIM_SOURCE_DIR) + "/data/measured/cudnn-sdpa-gb200-gb300.csv";
  for (const testing::CsvRow& row : testing::read_csv_rows(path)) {
    if (row.at("gpu") != gpu || testing::cell_number(row, "seq") != seq) continue;
    // Batch 2, 64 query heads of 128, causal: half the 4 b h s^2 d of a full forward.
    const double forward_flops = 4.0 * 2 * 64 * seq * static_cast<double>(seq) * 128 / 2;
    const double seconds =
        (testing::cell_number(row, "fwd_ms") + testing::cell_number(row, "bwd_ms")) / 1e3;
    return 3.5 * forward_flops / seconds / peak_flops_per_s;
  }
  ADD_FAILURE() << "no row for " << gpu << " at " << seq << " tokens";
  return 0;
}

double mean_fraction(const std::string& gpu, double peak_flops_per_s) {
  double sum = 0;
  for (int seq : {4096, 8192, 16384}) sum += measured_fraction(gpu, seq, peak_flops_per_s);
  return sum / 3;
}

TEST(BlackwellAttention, ThePresetsHoldCudnnsMeasuredShare) {
  const config::Hardware gb200 = *topo::hardware_preset("gb200-nvl72");
  const config::Hardware gb300 = *topo::hardware_preset("gb300-nvl72");
  const double gb200_share = mean_fraction("GB200", gb200.gpu().bf16_flops_per_s());
  const double gb300_share = mean_fraction("GB300", gb300.gpu().bf16_flops_per_s());
  EXPECT_NEAR(gb200_share, 0.542, 0.001);
  EXPECT_NEAR(gb300_share, 0.611, 0.001);
  EXPECT_NEAR(gb200.compute().attention(), gb200_share, 0.005);
  EXPECT_NEAR(gb300.compute().attention(), gb300_share, 0.005);
  // The DGX parts borrow their die's share.
  EXPECT_EQ(topo::hardware_preset("hgx-b200")->compute().attention(), gb200.compute().attention());
  EXPECT_EQ(topo::hardware_preset("hgx-b300")->compute().attention(), gb300.compute().attention());
}

TEST(BlackwellAttention, BlackwellUltraRunsTheSamePairFasterAtEveryLength) {
  // Same datasheet BF16 peak, doubled exponential units: 1.11-1.21 times the pair's rate.
  for (int seq : {4096, 8192, 16384, 32768}) {
    const double ratio = measured_fraction("GB300", seq, 1) / measured_fraction("GB200", seq, 1);
    EXPECT_GT(ratio, 1.10) << seq;
    EXPECT_LT(ratio, 1.22) << seq;
  }
}

}  // namespace
}  // namespace racksim::sim
