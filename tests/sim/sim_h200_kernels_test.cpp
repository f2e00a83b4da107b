// The kernel model against kernels measured on one H200 SXM (data/measured/h200-kernels/, taken
// with scripts/device/measure-hopper.py; data/measured/README.md says how):
//   - GEMMs: the tile model's two terms per dtype (fraction of the peak, fixed elements per
//     tile) fitted in log time to the 144 measured shapes with at least 4,096 rows, BF16 and FP8
//     (cuBLASLt, per-tensor scales); the fit is pinned, and so is how well two terms carry the
//     shape dependence (tiles, waves, short k);
//   - the burst rate of an 8,192-cube GEMM against the presets' rate, and the rate it holds once
//     the power limit bites against hardware.compute.sustained_clock_ratio;
//   - attention (cuDNN, head dimension 128, forward and backward) and HBM copies against the
//     presets' fractions.
// The table docs/validation.md shows:
//   build/sim_h200_kernels_test --gtest_filter='*PrintsTheTable*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/compute_model.h"
#include "sim/gemm_model.h"
#include "tests/support/compute_ops.h"
#include "tests/support/csv_rows.h"
#include "tests/support/run_racksim.h"
#include "tests/support/tile_fit.h"
#include "topologies/hardware_presets.h"

namespace racksim::sim {
namespace {

const std::string kDir = std::string(RACKSIM_SOURCE_DIR) + "/data/measured/h200-kernels/";

std::vector<testing::CsvRow> read_rows(const std::string& path) {
  return testing::read_csv_rows(path);
}

double number(const testing::CsvRow& row, const std::string& column) {
  return testing::cell_number(row, column);
}

struct MeasuredGemm {
  std::string dtype, group;
  double m = 0, n = 0, k = 0, seconds = 0;
  bool large() const { return m >= 4096 && !group.ends_with(".decode"); }
};

// file: gemm.csv (the grid back to back, at held clocks) or gemm-burst/gemm.csv (the large shapes
// again, each after 0.5 s idle: burst rates).
std::vector<MeasuredGemm> read_gemms(const std::string& dtype,
                                     const std::string& file = "gemm.csv") {
  std::vector<MeasuredGemm> out;
  for (const auto& row : read_rows(kDir + file)) {
    if (row.at("dtype") != dtype || row.at("ms").empty()) continue;
    out.push_back({dtype, row.at("group"), number(row, "m"), number(row, "n"), number(row, "k"),
                   number(row, "ms") / 1e3});
  }
  return out;
}

std::vector<MeasuredGemm> large(const std::vector<MeasuredGemm>& rows) {
  std::vector<MeasuredGemm> out;
  std::copy_if(rows.begin(), rows.end(), std::back_inserter(out),
               [](const MeasuredGemm& r) { return r.large(); });
  return out;
}

const config::Hardware& h200() {
  static const config::Hardware hw = *topo::hardware_preset("dgx-h200");
  return hw;
}

double peak(const std::string& dtype) {
  return dtype == "fp8" ? h200().gpu().fp8_flops_per_s() : h200().gpu().bf16_flops_per_s();
}

using TileTerms = ComputeModel::GemmRate;

// The preset's GEMM terms as the compute model reads them.
TileTerms preset_terms(const std::string& dtype) {
  return ComputeModel::from_hardware(h200()).gemm_rate(dtype == "fp8" ? DataType::kFp8
                                                                      : DataType::kBf16);
}

// The tile model's time for a measured shape (the kernel alone: no launch or host floor).
double tile_s(const MeasuredGemm& row, TileTerms terms) {
  return gemm_kernel_cost(row.m, row.k, row.n, 1, h200().gpu().sm_count(), peak(row.dtype),
                          terms.efficiency, terms.k_overhead)
      .seconds;
}

// A grid search: 0.005 in the fraction, 32 elements in the per-tile cost.
TileTerms fit(const std::vector<MeasuredGemm>& rows) {
  return testing::fit_tile_terms(rows, 32, tile_s, [](const MeasuredGemm& r) { return r.seconds; });
}

double mean_abs_error(const std::vector<MeasuredGemm>& rows, TileTerms terms) {
  double sum = 0;
  for (const MeasuredGemm& row : rows) sum += std::abs(tile_s(row, terms) / row.seconds - 1);
  return sum / rows.size();
}

// Fits one grid's 144 large shapes of one dtype and checks the fit: its two terms, and how far
// they carry the shapes (mean absolute error of the time).
TileTerms expect_fit(const std::string& dtype, const std::string& file, TileTerms expected,
                     double max_mean_error) {
  const std::vector<MeasuredGemm> rows = large(read_gemms(dtype, file));
  EXPECT_EQ(rows.size(), 144u) << dtype << " " << file;
  const TileTerms fitted = fit(rows);
  EXPECT_NEAR(fitted.efficiency, expected.efficiency, 0.0051) << dtype << " " << file;
  EXPECT_NEAR(fitted.k_overhead, expected.k_overhead, 32.1) << dtype << " " << file;
  EXPECT_LT(mean_abs_error(rows, fitted), max_mean_error) << dtype << " " << file;
  return fitted;
}

TEST(H200Gemms, TwoTileTermsPerDtypeCarryTheMeasuredShapes) {
  // Two terms carry 144 shapes (hidden 4,096 to 16,384, TP 1 to 8, 4,096 to 16,384 tokens, the
  // m sweep's waves) to 5 % on average, BF16 and FP8 alike, at held clocks.
  expect_fit("bf16", "gemm.csv", {0.730, 64}, 0.05);
  expect_fit("fp8", "gemm.csv", {0.695, 320}, 0.05);
}

TEST(H200Gemms, AtBurstTheSameTwoTermsCarryTheShapesAtAHigherLevel) {
  const TileTerms bf16_burst = expect_fit("bf16", "gemm-burst/gemm.csv", {0.850, 160}, 0.03);
  const TileTerms fp8_burst = expect_fit("fp8", "gemm-burst/gemm.csv", {0.805, 512}, 0.04);
  // Held over burst, fraction against fraction: 0.86 in both dtypes, as the 8,192 cube held for
  // seconds gives (0.842 and 0.862).
  EXPECT_NEAR(fit(large(read_gemms("bf16"))).efficiency / bf16_burst.efficiency, 0.86, 0.01);
  EXPECT_NEAR(fit(large(read_gemms("fp8"))).efficiency / fp8_burst.efficiency, 0.86, 0.01);
}

// The preset's terms against both grids (mean of model / measured - 1 over the 144 shapes).
double preset_mean_error(const std::string& dtype, const std::string& file) {
  const std::vector<MeasuredGemm> rows = large(read_gemms(dtype, file));
  double sum = 0;
  for (const MeasuredGemm& row : rows) sum += tile_s(row, preset_terms(dtype)) / row.seconds - 1;
  return sum / rows.size();
}

TEST(H200Gemms, ThePresetsSitBetweenTheBurstAndTheHeldGrid) {
  // The grid back to back ran under the software power cap in 96 % of nvidia-smi's samples
  // (median SM clock 1,530 MHz); the burst grid never (each shape after 0.5 s idle). MAMF's BF16
  // figure is 4 % slower than the burst grid and 9 % faster than the held one. DeepGEMM's
  // blockwise FP8 terms are 13 % slower than cuBLAS's per-tensor kernels at burst and 1.4 %
  // slower held: the presets' FP8 GEMMs are slow for Transformer Engine's per-tensor recipes.
  EXPECT_NEAR(preset_mean_error("bf16", "gemm-burst/gemm.csv"), 0.040, 0.01);
  EXPECT_NEAR(preset_mean_error("bf16", "gemm.csv"), -0.090, 0.01);
  EXPECT_NEAR(preset_mean_error("fp8", "gemm-burst/gemm.csv"), 0.130, 0.01);
  EXPECT_NEAR(preset_mean_error("fp8", "gemm.csv"), 0.014, 0.01);
}

// The sustained run (sustained-fine/): the best 20 ms window in the first 0.25 s from idle, and
// the mean of the one-second windows after 5 s, per dtype.
struct BurstAndHeld {
  double burst_tflops = 0;
  double held_tflops = 0;
};

BurstAndHeld sustained(const std::string& dtype) {
  BurstAndHeld out;
  std::vector<double> held;
  for (const auto& row : read_rows(kDir + "sustained-fine/sustained.csv")) {
    if (row.at("dtype") != dtype) continue;
    const double t = number(row, "t_s"), tflops = number(row, "tflops");
    if (t <= 0.25) out.burst_tflops = std::max(out.burst_tflops, tflops);
    if (t > 5) held.push_back(tflops);
  }
  out.held_tflops = std::accumulate(held.begin(), held.end(), 0.0) / held.size();
  return out;
}

TEST(H200Gemms, TheBurstMatchesThePresetsBf16RateAndTheHeldRateTheirClockRatio) {
  const MeasuredGemm cube{"bf16", "square", 8192, 8192, 8192, 0};
  const double model_tflops = 2 * 8192.0 * 8192 * 8192 / tile_s(cube, preset_terms("bf16")) / 1e12;
  const BurstAndHeld bf16 = sustained("bf16");
  const BurstAndHeld fp8 = sustained("fp8");
  // MAMF's H100 figure (0.801 of the peak) within 3 % of the H200's burst.
  EXPECT_NEAR(model_tflops / bf16.burst_tflops, 1.0, 0.03);
  EXPECT_NEAR(fp8.held_tflops / fp8.burst_tflops, 0.862, 0.0005);
  EXPECT_NEAR(bf16.held_tflops / bf16.burst_tflops, 0.842, 0.0005);
  // Every GH100 preset holds the FP8 ratio as its sustained_clock_ratio.
  for (const char* name : {"dgx-h100", "dgx-h200", "hgx-h800"}) {
    EXPECT_NEAR(topo::hardware_preset(name)->compute().sustained_clock_ratio(),
                fp8.held_tflops / fp8.burst_tflops, 0.0005)
        << name;
  }
}

// One transformer layer's kernels held for seconds (step-mix/, scripts/device/measure-step-mix.py:
// Llama 3 70B at TP4, forward and backward): the fastest pass in the first 0.1 s over the mean
// pass after 5 s. The mix draws less power than one large GEMM and holds more of its burst; the
// presets keep the single GEMM's ratio (a step adds NVLink's draw, which the mix lacks).
// The measured pass (step-mix/): the fastest in the first 0.1 s, and the mean after 5 s.
// folder: step-mix (8,192 tokens a rank) or step-mix-cp2 (4,096: the same layer at CP2).
double measured_pass_s(const std::string& dtype, bool held,
                       const std::string& folder = "step-mix") {
  double burst_ms = INFINITY, held_sum = 0;
  int held_passes = 0;
  for (const auto& row : read_rows(kDir + folder + "/step-mix.csv")) {
    if (row.at("gemm_dtype") != dtype) continue;
    const double t = number(row, "t_s"), ms = number(row, "pass_ms");
    if (t <= 0.1) burst_ms = std::min(burst_ms, ms);
    if (t > 5) held_sum += ms, ++held_passes;
  }
  return (held ? held_sum / held_passes : burst_ms) / 1e3;
}

// One rank's share of a layer for one micro-batch, as measure-step-mix.py --layer runs it.
struct RankLayer {
  double hidden, ffn, heads, kv_heads;  // ffn, heads and kv_heads per rank
  double seq = 8192, batch = 1;         // a micro-batch: batch sequences of seq tokens
  bool gated = true;                    // SwiGLU (gate and up); else one matrix (GELU, ReLU^2)
  double sp = 1;                        // sequence parallelism: norms and adds on tokens / sp
};
constexpr RankLayer kLlama70bTp4{8192, 28672 / 4, 64 / 4, 8 / 4};
constexpr RankLayer kLlama405bTp8{16384, 53248 / 8, 128 / 8, 8 / 8};
// The 4,096-wide layers of NeMo 24.07's H100 table (measure-narrow-layers.sh).
constexpr RankLayer kGpt3_5bTp1{4096, 16384, 32, 32, 2048, 4, false};
constexpr RankLayer kNemotron4_8bTp2{4096, 16384 / 2, 32 / 2, 32 / 2, 4096, 4, false, 2};
constexpr RankLayer kLlama2_7bTp1{4096, 11008, 32, 32, 4096};
constexpr RankLayer kLlama3_8b{4096, 14336, 32, 8};  // at CP2: 4,096 tokens a rank

// The same layer as racksim's kernel model times it (the dgx-h200 preset unless told), op by op
// as a step's graph holds them: each linear layer's forward GEMM and its backward (input and
// weight gradients), attention forward and backward (2.5 forward FLOPs), and the HBM-bound
// kernels by the bytes they move (a norm reads and writes tokens x hidden BF16, SwiGLU reads two
// tokens x ffn and writes one, a one-matrix activation reads one, a residual add reads two and
// writes one), with the preset's launch overheads. held_ratio: the presets'
// sustained_clock_ratio (1: burst). Attention causal per sequence; with fewer tokens than the
// micro-batch holds, the layer at CP2 as the script runs it (a causal block of the rank's
// queries and a full block of them on half as many keys, ring attention's two kinds of block).
double modelled_layer_pass_s(DataType gemm_dtype, double held_ratio, double tokens = 8192,
                             const ComputeModel& base = ComputeModel::from_hardware(h200()),
                             const RankLayer& layer = kLlama70bTp4) {
  ComputeModel model = base;
  model.sustained_clock_ratio = held_ratio;
  const double gemm_bytes = gemm_dtype == DataType::kFp8 ? 1 : 2;
  const double h = layer.hidden, f = layer.ffn, heads = layer.heads;
  double seconds = 0;
  const double up = layer.gated ? 2 * f : f;
  const double linear[4][3] = {{tokens, h, (heads + 2 * layer.kv_heads) * 128},
                               {tokens, heads * 128, h},
                               {tokens, h, up},
                               {tokens, f, h}};
  for (const auto& [m, k, n] : linear) {
    for (const GemmPass pass : {GemmPass::kForward, GemmPass::kBackward}) {
      const double passes = pass == GemmPass::kForward ? 1 : 2;
      const Op op = testing::compute_op(OpClass::kGemm, passes * 2 * m * k * n,
                                        passes * gemm_bytes * (m * k + k * n + m * n), gemm_dtype);
      seconds += model.duration_s(op, KernelShape{static_cast<float>(m), static_cast<float>(k),
                                                  static_cast<float>(n), 1, pass});
    }
  }
  const double q = tokens / layer.batch;
  std::vector<double> attention_flops = {4.0 * heads * layer.batch * q * q * 128 * 0.5};
  if (q < layer.seq) attention_flops.push_back(4.0 * heads * layer.batch * q * (q / 2) * 128);
  for (const double flops : attention_flops) {
    for (const double share : {1.0, 2.5}) {
      seconds += model.duration_s(testing::compute_op(OpClass::kAttention, share * flops,
                                                      share * 4 * tokens * heads * 128 * 2));
    }
  }
  const double tensor = tokens / layer.sp * h * 2, mlp = tokens * f * 2;
  const double activation = layer.gated ? 3 * mlp : 2 * mlp;
  for (const double bytes : {2 * tensor, 2 * tensor, activation, 3 * tensor, 3 * tensor}) {
    // A few FLOPs per element: HBM-bound whatever the count; forward and backward.
    seconds += 2 * model.duration_s(testing::compute_op(OpClass::kElementwise, bytes, bytes));
  }
  return seconds;
}

TEST(H200Gemms, ThePresetsTimeALayersMixWithinFivePercent) {
  // At burst, the presets' public figures alone (MAMF BF16, DeepGEMM FP8, attention 0.60, HBM
  // 0.85): FP8 +3.0 %, BF16 +0.1 %.
  EXPECT_NEAR(modelled_layer_pass_s(DataType::kFp8, 1) / measured_pass_s("fp8", false), 1.030,
              0.005);
  EXPECT_NEAR(modelled_layer_pass_s(DataType::kBf16, 1) / measured_pass_s("bf16", false), 1.001,
              0.005);
  // Held, with the presets' ratio on the FLOP-bound kernels: FP8 +4.2 %, BF16 +0.0 %.
  EXPECT_NEAR(modelled_layer_pass_s(DataType::kFp8, 0.862) / measured_pass_s("fp8", true), 1.042,
              0.005);
  EXPECT_NEAR(modelled_layer_pass_s(DataType::kBf16, 0.862) / measured_pass_s("bf16", true), 1.000,
              0.005);
}

TEST(H200Gemms, TheHeldGridsOwnTermsTimeTheHeldLayerTooFast) {
  // The what-if of docs/validation.md: the terms fitted to the held grid (and attention and HBM
  // as measured) instead of the presets at the held ratio. The grid held higher clocks than a
  // layer's kernels back to back do: FP8 7.0 % and BF16 5.3 % too fast.
  ComputeModel grid = ComputeModel::from_hardware(h200());
  grid.gemm_efficiency = 0.730;
  grid.gemm_k_overhead = 64;
  grid.gemm_fp8_efficiency = 0.695;
  grid.gemm_fp8_k_overhead = 320;
  grid.attention_efficiency = 0.53;
  grid.hbm_efficiency = 0.894;
  EXPECT_NEAR(modelled_layer_pass_s(DataType::kFp8, 1, 8192, grid) / measured_pass_s("fp8", true),
              0.930, 0.005);
  EXPECT_NEAR(modelled_layer_pass_s(DataType::kBf16, 1, 8192, grid) / measured_pass_s("bf16", true),
              0.947, 0.005);
}

TEST(H200Gemms, TheLayerAtCp2IsTimedAsWellAsAtCp1) {
  // Half the tokens a rank (context parallelism 2): smaller GEMMs, two attention blocks. The
  // model's error moves by under 2 points from the CP1 layer (burst: FP8 +3.0 -> +4.4 %, BF16
  // +0.1 -> +1.2 %; held: +4.2 -> +3.8 % and +0.0 -> +0.1 %), so the 9-12 points by which the
  // CP2 rows of the H100 table are faster than the CP1 rows are not in the layer's kernels.
  EXPECT_NEAR(modelled_layer_pass_s(DataType::kFp8, 1, 4096) /
                  measured_pass_s("fp8", false, "step-mix-cp2"),
              1.044, 0.005);
  EXPECT_NEAR(modelled_layer_pass_s(DataType::kBf16, 1, 4096) /
                  measured_pass_s("bf16", false, "step-mix-cp2"),
              1.012, 0.005);
  EXPECT_NEAR(modelled_layer_pass_s(DataType::kFp8, 0.862, 4096) /
                  measured_pass_s("fp8", true, "step-mix-cp2"),
              1.038, 0.005);
  EXPECT_NEAR(modelled_layer_pass_s(DataType::kBf16, 0.862, 4096) /
                  measured_pass_s("bf16", true, "step-mix-cp2"),
              1.001, 0.005);
}

double layer_mix_ratio(const std::string& dtype) {
  return measured_pass_s(dtype, false) / measured_pass_s(dtype, true);
}

TEST(H200Gemms, ALayersMixHoldsMoreOfItsBurstThanOneGemm) {
  EXPECT_NEAR(layer_mix_ratio("fp8"), 0.882, 0.0005);
  EXPECT_NEAR(layer_mix_ratio("bf16"), 0.867, 0.0005);
  EXPECT_GT(layer_mix_ratio("fp8"), sustained("fp8").held_tflops / sustained("fp8").burst_tflops);
  EXPECT_GT(layer_mix_ratio("bf16"),
            sustained("bf16").held_tflops / sustained("bf16").burst_tflops);
}

TEST(H200Gemms, TheLlama405bLayerAtTp8IsTimedSlowerNotFaster) {
  // Llama 3.1 405B at TP8 (step-mix-405b/, and step-mix-405b-cp2/: CP2, 4,096 tokens a rank),
  // the layout of the 405B rows of the H100 table, which racksim gives 6-9 % too fast at the
  // held rate: its kernels are timed 4-7 % too slow in FP8 and 0-3 % in BF16, so the missing
  // time of those rows is not in the layer's kernels (as for the 70B layer at CP1 and CP2).
  const ComputeModel preset = ComputeModel::from_hardware(h200());
  struct Case {
    double tokens;
    DataType dtype;
    bool held;
    double model_over_measured;
  };
  for (const Case& c :
       {Case{8192, DataType::kFp8, false, 1.070}, Case{8192, DataType::kFp8, true, 1.043},
        Case{8192, DataType::kBf16, false, 1.031}, Case{8192, DataType::kBf16, true, 1.005},
        Case{4096, DataType::kFp8, false, 1.070}, Case{4096, DataType::kFp8, true, 1.069},
        Case{4096, DataType::kBf16, false, 1.027}, Case{4096, DataType::kBf16, true, 1.006}}) {
    const std::string folder = c.tokens == 8192 ? "step-mix-405b" : "step-mix-405b-cp2";
    const std::string name = c.dtype == DataType::kFp8 ? "fp8" : "bf16";
    const double model =
        modelled_layer_pass_s(c.dtype, c.held ? 0.862 : 1, c.tokens, preset, kLlama405bTp8);
    EXPECT_NEAR(model / measured_pass_s(name, c.held, folder), c.model_over_measured, 0.005)
        << c.tokens << " " << name << (c.held ? " held" : " burst");
  }
}

TEST(H200Gemms, TheNarrowLayersAsTimedBeforeAnyMeasurement) {
  // racksim's pass times for the four layers measure-narrow-layers.sh will measure, on the
  // dgx-h100 preset (the GPU of NeMo 24.07's rows) and dgx-h200, recorded before any
  // measurement: the wide layers came out 0-7 % slow against theirs (above), and the rows of
  // these narrow ones 6.5-13.7 % fast. Each case: FP8 and BF16 GEMMs, at burst and held.
  struct Case {
    const char* preset;
    const RankLayer* layer;
    double tokens;
    double fp8_burst_ms, fp8_held_ms, bf16_burst_ms, bf16_held_ms;
  };
  for (const Case& c : {
           Case{"dgx-h100", &kGpt3_5bTp1, 8192, 9.407, 10.770, 14.712, 16.924},
           Case{"dgx-h100", &kNemotron4_8bTp2, 16384, 10.251, 11.749, 15.528, 17.871},
           Case{"dgx-h100", &kLlama2_7bTp1, 4096, 5.240, 6.003, 7.815, 8.990},
           Case{"dgx-h100", &kLlama3_8b, 4096, 6.430, 7.374, 9.218, 10.608},
           Case{"dgx-h200", &kGpt3_5bTp1, 8192, 9.151, 10.514, 14.456, 16.667},
           Case{"dgx-h200", &kNemotron4_8bTp2, 16384, 9.995, 11.493, 15.272, 17.614},
           Case{"dgx-h200", &kLlama2_7bTp1, 4096, 5.112, 5.875, 7.686, 8.861},
           Case{"dgx-h200", &kLlama3_8b, 4096, 6.284, 7.228, 9.072, 10.462},
       }) {
    const ComputeModel preset = ComputeModel::from_hardware(*topo::hardware_preset(c.preset));
    const auto ms = [&](DataType dtype, double held) {
      return 1e3 * modelled_layer_pass_s(dtype, held, c.tokens, preset, *c.layer);
    };
    EXPECT_NEAR(ms(DataType::kFp8, 1), c.fp8_burst_ms, 0.001) << c.preset << " " << c.tokens;
    EXPECT_NEAR(ms(DataType::kFp8, 0.862), c.fp8_held_ms, 0.001) << c.preset;
    EXPECT_NEAR(ms(DataType::kBf16, 1), c.bf16_burst_ms, 0.001) << c.preset;
    EXPECT_NEAR(ms(DataType::kBf16, 0.862), c.bf16_held_ms, 0.001) << c.preset;
  }
}

// cuDNN's fused attention (Transformer Engine's on Hopper), head dimension 128, causal: the
// forward and the backward (2.5 forward FLOPs, as racksim counts it) over their two times,
// as racksim times an attention kernel pair at one fraction of the BF16 peak.
double attention_fraction(int seq) {
  for (const auto& row : read_rows(kDir + "attention.csv")) {
    if (row.at("backend") != "cudnn" || row.at("head_dim") != "128" || row.at("causal") != "1" ||
        number(row, "seq") != seq)
      continue;
    const double flops = 2.0 * number(row, "batch") * number(row, "heads") * seq * seq * 128;
    const double seconds = (number(row, "fwd_ms") + number(row, "bwd_ms")) / 1e3;
    return 3.5 * flops / seconds / h200().gpu().bf16_flops_per_s();
  }
  return 0;
}

TEST(H200Attention, ThePresetFractionAtTheHeldRateMatchesCudnn) {
  // Measured 0.52-0.54 from 4K to 16K tokens; the presets' 0.60 (FlashAttention-3's forward)
  // at the held rate (0.862) is 0.517.
  const double held = h200().compute().attention() * 0.862;
  for (int seq : {4096, 8192, 16384}) {
    EXPECT_NEAR(held / attention_fraction(seq), 1.0, 0.05) << seq;
  }
}

TEST(H200Hbm, ThePresetFractionIsBelowTheMeasuredCopy) {
  int copies = 0;
  for (const auto& row : read_rows(kDir + "hbm.csv")) {
    if (row.at("kernel") != "copy" || row.at("mib") != "4096") continue;
    ++copies;
    const double fraction = number(row, "gb_per_s") * 1e9 / h200().gpu().hbm_bytes_per_s();
    EXPECT_NEAR(fraction, 0.894, 0.001);
    EXPECT_NEAR(h200().compute().hbm() / fraction, 0.95, 0.01);
  }
  EXPECT_EQ(copies, 1);
}

TEST(H200Gemms, PrintsTheTable) {
  std::string table =
      "| grid | dtype | shapes | measured TFLOP/s (median) | fitted terms | error, fitted "
      "(mean abs.) | error, preset (mean) |\n|---|---|---|---|---|---|---|\n";
  for (const std::string file : {"gemm-burst/gemm.csv", "gemm.csv"}) {
    for (const std::string dtype : {"bf16", "fp8"}) {
      const std::vector<MeasuredGemm> rows = large(read_gemms(dtype, file));
      const TileTerms fitted = fit(rows);
      std::vector<double> tflops;
      for (const MeasuredGemm& row : rows)
        tflops.push_back(2 * row.m * row.n * row.k / row.seconds / 1e12);
      std::nth_element(tflops.begin(), tflops.begin() + tflops.size() / 2, tflops.end());
      table +=
          fmt::format("| {} | {} | {} | {:.0f} | {:.3f}, {:.0f} | {:.1f} % | {:+.1f} % |\n",
                      file == "gemm.csv" ? "held" : "burst", dtype, rows.size(),
                      tflops[tflops.size() / 2], fitted.efficiency, fitted.k_overhead,
                      100 * mean_abs_error(rows, fitted), 100 * preset_mean_error(dtype, file));
    }
  }
  std::cout << table;
  EXPECT_NE(table.find("| burst | bf16 | 144 |"), std::string::npos);
}

}  // namespace
}  // namespace racksim::sim
