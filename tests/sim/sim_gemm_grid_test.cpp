// The kernel model's FP8 GEMMs against a public grid of measured shapes: DeepGEMM's FP8 GEMMs
// on an H800 (data/measured/deepgemm-h800-fp8-gemm.csv). The Hopper presets' gemm_fp8 and
// gemm_fp8_k_overhead are the tile model's least-squares fit (in log time) to the ten shapes
// with thousands of rows; this test redoes the fit, checks that the presets hold its result, and
// prints the table docs/validation.md shows:
//   build/sim_gemm_grid_test --gtest_filter='*PrintsTheTable*'
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/compute_model.h"
#include "sim/gemm_model.h"
#include "tests/support/csv_rows.h"
#include "tests/support/preset_at_burst.h"
#include "tests/support/tile_fit.h"
#include "topologies/hardware_presets.h"

namespace racksim::sim {
namespace {

struct MeasuredGemm {
  std::string kind;
  double groups = 1, m = 0, n = 0, k = 0;
  double tflops = 0;
  double seconds() const { return 2 * groups * m * n * k / (tflops * 1e12); }
  bool large() const { return groups * m >= 4096; }
};

std::vector<MeasuredGemm> read_grid() {
  std::vector<MeasuredGemm> rows;
  for (const testing::CsvRow& r : testing::read_csv_rows(
           std::string(RACKSIM_SOURCE_DIR) + "/data/measured/deepgemm-h800-fp8-gemm.csv")) {
    using testing::cell_number;
    rows.push_back({r.at("kind"), cell_number(r, "groups"), cell_number(r, "m"),
                    cell_number(r, "n"), cell_number(r, "k"), cell_number(r, "tflops")});
  }
  return rows;
}

using GemmRate = ComputeModel::GemmRate;

// At burst: the measurements are short benchmarks.
const config::Hardware& h800() {
  static const config::Hardware hw = testing::preset_at_burst("hgx-h800");
  return hw;
}

// The tile model's time for a row at a candidate FP8 rate (no HBM floor): what the fit varies.
double tile_s(const MeasuredGemm& row, GemmRate fp8) {
  const config::Gpu& gpu = h800().gpu();
  return gemm_kernel_cost(row.m, row.k, row.n, row.groups, gpu.sm_count(), gpu.fp8_flops_per_s(),
                          fp8.efficiency, fp8.k_overhead)
      .seconds;
}

// The row as racksim's kernel model times it on the hgx-h800 preset: an FP8 GEMM of its shape whose
// operands are FP8 and whose output is BF16, against the HBM floor of those bytes.
Op fp8_gemm_op(const MeasuredGemm& row) {
  Op op;
  op.kind = OpKind::kCompute;
  op.op_class = OpClass::kGemm;
  op.dtype = DataType::kFp8;
  op.amount = 2 * row.groups * row.m * row.n * row.k;
  op.hbm_bytes = row.groups * (row.m * row.k + row.k * row.n + 2 * row.m * row.n);
  return op;
}

KernelShape shape_of(const MeasuredGemm& row) {
  return KernelShape{static_cast<float>(row.m), static_cast<float>(row.k),
                     static_cast<float>(row.n), static_cast<float>(row.groups), GemmPass::kForward};
}

// DeepGEMM times kernels alone, so the model does too: without the per-kernel launch overhead
// and the host's floor, which a step adds between kernels (as the Kineto replay's GEMM timer).
const ComputeModel& h800_model() {
  static const ComputeModel model = [] {
    ComputeModel m = ComputeModel::from_hardware(h800());
    m.launch_overhead_s = 0;
    m.cpu_launch_floor_s = 0;
    return m;
  }();
  return model;
}

double model_s(const MeasuredGemm& row) {
  return h800_model().duration_s(fp8_gemm_op(row), shape_of(row));
}

// The HBM floor alone, to tell which bound a row is at.
double hbm_floor_s(const MeasuredGemm& row) {
  return fp8_gemm_op(row).hbm_bytes / (h800_model().hbm_bytes_per_s * h800_model().hbm_efficiency);
}

// A grid search: 0.005 in the fraction, 16 K elements in the overhead.
GemmRate fit(const std::vector<MeasuredGemm>& rows) {
  return testing::fit_tile_terms(rows, 16, tile_s,
                                 [](const MeasuredGemm& r) { return r.seconds(); });
}

std::vector<MeasuredGemm> large_rows() {
  std::vector<MeasuredGemm> rows;
  for (const MeasuredGemm& row : read_grid()) {
    if (row.large()) rows.push_back(row);
  }
  return rows;
}

GemmRate preset_fp8() {
  return h800_model().gemm_rate(DataType::kFp8);
}

TEST(DeepGemmGrid, TheHopperPresetsHoldTheFitToTheLargeShapes) {
  const std::vector<MeasuredGemm> rows = large_rows();
  ASSERT_EQ(rows.size(), 10u);
  const GemmRate fitted = fit(rows);
  EXPECT_NEAR(preset_fp8().efficiency, fitted.efficiency, 0.0051);
  EXPECT_NEAR(preset_fp8().k_overhead, fitted.k_overhead, 16.1);
  for (const char* name : {"dgx-h100", "dgx-h200"}) {
    const config::Hardware hw = *topo::hardware_preset(name);
    EXPECT_EQ(hw.compute().gemm_fp8(), preset_fp8().efficiency) << name;
    EXPECT_EQ(hw.compute().gemm_fp8_k_overhead(), preset_fp8().k_overhead) << name;
  }
}

TEST(DeepGemmGrid, EveryLargeShapeWithinFourPercent) {
  // Large shapes are FLOP-bound: racksim times them by the tile model.
  for (const MeasuredGemm& row : large_rows()) {
    EXPECT_GT(tile_s(row, preset_fp8()), hbm_floor_s(row));
    EXPECT_NEAR(model_s(row) / row.seconds(), 1.0, 0.04)
        << row.groups << " x " << row.m << " x " << row.n << " x " << row.k;
  }
  // Without the per-tile overhead the short-k shapes would be 15-50 % too fast.
  const MeasuredGemm short_k{"dense", 1, 4096, 32768, 512, 590};
  EXPECT_LT(tile_s(short_k, {preset_fp8().efficiency, 0}) / short_k.seconds(), 0.6);
}

TEST(DeepGemmGrid, DecodeShapesAreUpToAQuarterTooFast) {
  // 64 and 128 rows: not fitted. The model bounds most of them by HBM and is up to 26 % too fast
  // (DeepGEMM moves 1.5-2.7 TB/s of the 3.35 on them); pinned so that a change shows.
  for (const MeasuredGemm& row : read_grid()) {
    if (row.large()) continue;
    EXPECT_LT(model_s(row) / row.seconds(), 1.05) << row.m << " x " << row.n << " x " << row.k;
    EXPECT_GT(model_s(row) / row.seconds(), 0.72) << row.m << " x " << row.n << " x " << row.k;
  }
}

TEST(DeepGemmGrid, PrintsTheTable) {
  std::string table =
      "| kind | groups | m | n | k | measured TFLOP/s | model TFLOP/s | error (time) | bound |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const MeasuredGemm& row : read_grid()) {
    const double seconds = model_s(row);
    const bool tile_bound = tile_s(row, preset_fp8()) >= hbm_floor_s(row);
    table += fmt::format("| {} | {} | {} | {} | {} | {:.0f} | {:.0f} | {:+.1f} % | {} |\n",
                         row.kind, row.groups, row.m, row.n, row.k, row.tflops,
                         2 * row.groups * row.m * row.n * row.k / seconds / 1e12,
                         100 * (seconds / row.seconds() - 1), tile_bound ? "tiles" : "HBM");
  }
  std::cout << table;
  EXPECT_NE(table.find("| 4096 | 7168 | 16384 |"), std::string::npos);
}

}  // namespace
}  // namespace racksim::sim
