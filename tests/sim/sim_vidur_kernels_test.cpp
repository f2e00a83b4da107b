// The kernel model's A100 GEMMs against GEMM kernels that another team timed on A100s with
// another stack: Vidur's profiles of Llama-2-7B and Llama-2-70B layers (data/measured/vidur-a100/,
// FP16 cuBLAS under PyTorch, each kernel's CUDA time from the profiler, m = 1 to 4,096 tokens, TP
// 1 to 8; README.md there says how they were taken). Nothing in racksim was fitted on them:
//   - the dgx-a100 preset's datasheet terms time the 812 GEMMs at burst and at the held rate;
//   - the tile model's two regimes (one SM's rate, the ceiling of a GEMM that fills the GPU) and a
//     fixed time per kernel, fitted on these kernels alone, come out with the SM's rate above the
//     ceiling, as the fit on vTrain's step times does, at about the same ratio;
//   - fitted on the 7B layer's GEMMs alone, the same terms carry to the 70B layer's;
//   - the a100-vtrain-cluster preset's terms, fitted on vTrain's step times, carried to them;
//   - phi-2's narrower A100 layer at the sizes of vTrain's 2,048-wide TP1 micro-batches, timed by
//     the terms fitted on the Llama-2 layers and by a100-vtrain-cluster's;
//   - the same for the 70B layer on Vidur's H100s (data/measured/vidur-h100/) and dgx-h100, and,
//     with phi-2's narrower layer beside it, the H100's two regimes fitted apart.
// The table docs/validation.md shows:
//   build/sim_vidur_kernels_test --gtest_filter='*PrintsTheTable*'
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/compute_model.h"
#include "tests/support/compute_ops.h"
#include "tests/support/csv_rows.h"
#include "topologies/hardware_presets.h"

namespace racksim::sim {
namespace {

struct Layer {
  std::string file;
  // The QKV projection's width, the MLP's up product's (both halves where gated) and the down
  // product's inner dimension.
  double hidden = 0, qkv = 0, up = 0, down = 0;
};

// The layers data/measured/vidur-<gpu>/ holds.
std::vector<Layer> layers(const std::string& gpu) {
  const Layer llama2_7b{"llama2-7b", 4096, 3 * 4096, 2 * 11008, 11008};
  const Layer llama2_70b{"llama2-70b", 8192, (64 + 2 * 8) * 128, 2 * 28672, 28672};
  const Layer phi2{"phi-2", 2560, 3 * 2560, 10240, 10240};
  if (gpu == "h100") return {llama2_70b, phi2};
  return {llama2_7b, llama2_70b, phi2};
}

struct MeasuredGemm {
  std::string layer, op;
  int tp = 1;
  double m = 0, k = 0, n = 0, seconds = 0;
};

// One row's four GEMMs: the QKV and output projections, the gated MLP's up and down products,
// each a TP rank's slice.
void add_row_gemms(const Layer& layer, const testing::CsvRow& row, std::vector<MeasuredGemm>& out) {
  const int tp = static_cast<int>(testing::cell_number(row, "tp"));
  const double m = testing::cell_number(row, "tokens");
  const double h = layer.hidden;
  const std::vector<std::pair<std::string, std::array<double, 2>>> ops = {
      {"attn_pre_proj", {h, layer.qkv / tp}},
      {"attn_post_proj", {h / tp, h}},
      {"mlp_up_proj", {h, layer.up / tp}},
      {"mlp_down_proj", {layer.down / tp, h}}};
  for (const auto& [op, kn] : ops) {
    const double ms = testing::cell_number(row, op + "_ms");
    out.push_back({layer.file, op, tp, m, kn[0], kn[1], ms / 1e3});
  }
}

// `gpu`: a100 or h100, the folder data/measured/vidur-<gpu>/.
std::vector<MeasuredGemm> read_gemms(const std::string& only_layer = "",
                                     const std::string& gpu = "a100") {
  std::vector<MeasuredGemm> out;
  for (const Layer& layer : layers(gpu)) {
    if (!only_layer.empty() && layer.file != only_layer) continue;
    const std::string path = std::string(RACKSIM_SOURCE_DIR) + "/data/measured/vidur-" + gpu + "/" +
                             layer.file + "-linear.csv";
    for (const auto& row : testing::read_csv_rows(path)) add_row_gemms(layer, row, out);
  }
  return out;
}

// A preset's compute model as a kernel's own time: the profiler times the GPU's work, so no host
// floor; `held` keeps the preset's power-limit share, else the burst rate.
ComputeModel preset_model(const std::string& preset, bool held) {
  ComputeModel model = ComputeModel::from_hardware(*topo::hardware_preset(preset));
  model.cpu_launch_floor_s = 0;
  if (!held) model.sustained_clock_ratio = 1;
  return model;
}

// The model's time for one measured GEMM: tiles and waves (split-K where allowed), the
// ceiling, the HBM floor of its operands, the fixed time per kernel.
double model_s(const ComputeModel& model, const MeasuredGemm& row) {
  const double bytes = 2 * (row.m * row.k + row.k * row.n + row.m * row.n);
  const Op op =
      testing::compute_op(OpClass::kGemm, 2 * row.m * row.k * row.n, bytes, DataType::kFp16);
  KernelShape shape;
  shape.m = static_cast<float>(row.m);
  shape.k = static_cast<float>(row.k);
  shape.n = static_cast<float>(row.n);
  return model.timed(op, shape).seconds;
}

struct Errors {
  double mean = 0, mean_abs = 0;
  size_t count = 0;
};

Errors errors(const ComputeModel& model, const std::vector<MeasuredGemm>& rows,
              const std::function<bool(const MeasuredGemm&)>& keep = {}) {
  Errors e;
  for (const MeasuredGemm& row : rows) {
    if (keep && !keep(row)) continue;
    const double error = model_s(model, row) / row.seconds - 1;
    e.mean += error, e.mean_abs += std::abs(error), ++e.count;
  }
  if (e.count > 0) e.mean /= e.count, e.mean_abs /= e.count;
  return e;
}

// The terms a fit varies: one SM's share of the peak, the ceiling of a GEMM that fills every SM,
// and a fixed time per kernel (its start and its tail on the GPU).
struct TwoRegimes {
  double per_sm = 1, ceiling = 0, per_kernel_s = 0;
};

ComputeModel with_terms(ComputeModel model, const TwoRegimes& terms) {
  model.gemm_efficiency = terms.per_sm;
  model.gemm_sustained = terms.ceiling;
  model.launch_overhead_s = terms.per_kernel_s;
  model.gemm_split_k_max = 8;  // as the A100 calibration: cuBLAS splits k for GEMMs of few tiles
  model.sustained_clock_ratio = 1;
  return model;
}

// A grid search for the lowest mean |error|: 0.01 in either rate, 1 us per kernel.
TwoRegimes fit(const std::vector<MeasuredGemm>& rows, const std::string& preset = "dgx-a100") {
  const ComputeModel base = preset_model(preset, false);
  TwoRegimes best;
  double best_error = INFINITY;
  for (int sm = 80; sm <= 100; sm += 1) {
    for (int ceiling = 64; ceiling <= 84; ceiling += 1) {
      for (int us = 0; us <= 8; ++us) {
        const TwoRegimes terms{sm / 100.0, ceiling / 100.0, us * 1e-6};
        const double error = errors(with_terms(base, terms), rows).mean_abs;
        if (error < best_error) best = terms, best_error = error;
      }
    }
  }
  return best;
}

// The Llama-2 layers' A100 GEMMs, which the A100 fits and the table use (phi-2's has a test of
// its own).
const std::vector<MeasuredGemm>& all_gemms() {
  static const std::vector<MeasuredGemm> rows = [] {
    std::vector<MeasuredGemm> out = read_gemms("llama2-7b");
    for (const MeasuredGemm& row : read_gemms("llama2-70b")) out.push_back(row);
    return out;
  }();
  return rows;
}

const TwoRegimes& fitted_on_all() {
  static const TwoRegimes terms = fit(all_gemms());
  return terms;
}

TEST(VidurA100Gemms, TheFilesHoldTheRowsTheirHeadersDescribe) {
  EXPECT_EQ(read_gemms("llama2-7b").size(), 135u * 4);
  EXPECT_EQ(read_gemms("llama2-70b").size(), 68u * 4);
  // The 7B layer's QKV GEMM at 4,096 tokens on one GPU: 412 GFLOP in 1.911 ms, 216 TFLOP/s.
  const MeasuredGemm& first = all_gemms().front();
  EXPECT_EQ(first.op, "attn_pre_proj");
  EXPECT_NEAR(2 * first.m * first.k * first.n / first.seconds / 1e12, 215.7, 0.1);
}

TEST(VidurA100Gemms, TheDatasheetPresetTimesThemWithinAFewPercentOnAverage) {
  // At burst the preset is 1.0 % fast on average (10.3 % mean |error|, the spread in the
  // smallest GEMMs); at the held rate it borrows from a GH100 (0.862) it is 14.0 % slow, most
  // on the GEMMs that leave SMs idle: the held rate is a step's, and these kernels were timed one
  // shape at a time.
  const Errors burst = errors(preset_model("dgx-a100", false), all_gemms());
  const Errors held = errors(preset_model("dgx-a100", true), all_gemms());
  EXPECT_EQ(burst.count, 812u);
  EXPECT_NEAR(burst.mean, -0.010, 0.005);
  EXPECT_NEAR(burst.mean_abs, 0.103, 0.005);
  EXPECT_NEAR(held.mean, 0.140, 0.005);
}

TEST(VidurA100Gemms, TheKernelsAloneFindTheTwoRegimesOfTheStepTimeFit) {
  // Fitted on the 812 kernels: one SM's main loop near the peak, a GPU full of tiles held lower,
  // and a few microseconds per kernel. vTrain's step times gave a100-vtrain-cluster the same
  // structure (per SM 1, ceiling 0.783): the two regimes are the GPU's, not a fit's artefact.
  const TwoRegimes& terms = fitted_on_all();
  EXPECT_NEAR(terms.per_sm, 0.94, 0.015);
  EXPECT_NEAR(terms.ceiling, 0.73, 0.015);
  EXPECT_NEAR(terms.per_kernel_s, 6e-6, 0.6e-6);
  EXPECT_GT(terms.per_sm - terms.ceiling, 0.15);
  const ComputeModel vtrain = preset_model("a100-vtrain-cluster", true);
  EXPECT_NEAR(terms.ceiling / terms.per_sm, vtrain.gemm_sustained / vtrain.gemm_efficiency, 0.03);
  const Errors fitted = errors(with_terms(preset_model("dgx-a100", false), terms), all_gemms());
  EXPECT_LT(fitted.mean_abs, 0.07);
}

TEST(VidurA100Gemms, FittedOnThe7bLayerTheTermsCarryToThe70bLayer) {
  // Fit on the smaller model, predict the larger: the 70B layer's 272 GEMMs (k up to 28,672,
  // kernels up to 16 ms) from terms fitted on the 7B layer's 540.
  const TwoRegimes terms = fit(read_gemms("llama2-7b"));
  const Errors held_out =
      errors(with_terms(preset_model("dgx-a100", false), terms), read_gemms("llama2-70b"));
  fmt::print("fitted on 7B: per SM {:.2f}, ceiling {:.2f}, {:.0f} us; 70B: {:+.1f} / {:.1f} %\n",
             terms.per_sm, terms.ceiling, terms.per_kernel_s * 1e6, held_out.mean * 100,
             held_out.mean_abs * 100);
  EXPECT_LT(held_out.mean_abs, 0.06);
  EXPECT_LT(std::abs(held_out.mean), 0.04);
}

TEST(VidurA100Gemms, TheVtrainClustersTermsRunTheseGpusFaster) {
  // The step-time fit's GEMMs are 5-10 % faster than these kernels where the ceiling holds
  // (large GEMMs), and faster still on the smallest, which the fit's terms time without a fixed
  // cost per kernel (the host's 69 us per operation stands in for it in a step).
  const ComputeModel vtrain = preset_model("a100-vtrain-cluster", true);
  const Errors all = errors(vtrain, all_gemms());
  const Errors large =
      errors(vtrain, all_gemms(), [](const MeasuredGemm& r) { return r.m > 3000 && r.tp == 1; });
  EXPECT_LT(all.mean, -0.10);
  EXPECT_LT(large.mean, -0.05);
  EXPECT_GT(large.mean, -0.14);
}

TEST(VidurA100Gemms, WhatIfTheHeldRatioHeldOnlyTheCeiling) {
  // A what-if the presets do not take (docs/validation.md): one SM at the burst rate (MAMF's
  // 0.859), the ceiling of a full GPU at the held one (0.859 x 0.862). On these kernels it is
  // +1.3 % on average (9.0 % mean |error|), where the preset's held rate is +14.0 % (16.5 %).
  ComputeModel what_if = preset_model("dgx-a100", false);
  what_if.gemm_sustained =
      what_if.gemm_efficiency * preset_model("dgx-a100", true).sustained_clock_ratio;
  const Errors e = errors(what_if, all_gemms());
  EXPECT_NEAR(e.mean, 0.013, 0.005);
  EXPECT_NEAR(e.mean_abs, 0.090, 0.005);
}

// A layer's four GEMMs summed, per layer (model, TP, tokens) with min_m <= m <= max_m: the mean,
// mean |error| and range of predicted / measured - 1; and the largest |error| of a single GEMM.
struct LayerErrors {
  double mean = 0, mean_abs = 0, lowest = INFINITY, highest = -INFINITY, worst_gemm = 0;
  size_t layers = 0;
  double worst() const { return std::max(-lowest, highest); }
};

LayerErrors layer_errors(const ComputeModel& model, const std::vector<MeasuredGemm>& rows,
                         double min_m, double max_m) {
  std::map<std::tuple<std::string, int, double>, std::array<double, 2>> sums;
  LayerErrors e;
  for (const MeasuredGemm& row : rows) {
    if (row.m < min_m || row.m > max_m) continue;
    const double predicted_s = model_s(model, row);
    e.worst_gemm = std::max(e.worst_gemm, std::abs(predicted_s / row.seconds - 1));
    auto& sum = sums[{row.layer, row.tp, row.m}];
    sum[0] += predicted_s, sum[1] += row.seconds;
  }
  for (const auto& [key, sum] : sums) {
    const double error = sum[0] / sum[1] - 1;
    e.mean += error, e.mean_abs += std::abs(error);
    e.lowest = std::min(e.lowest, error), e.highest = std::max(e.highest, error);
  }
  e.layers = sums.size();
  if (e.layers > 0) e.mean /= e.layers, e.mean_abs /= e.layers;
  return e;
}

TEST(VidurA100Gemms, ALayersFourGemmsTogetherMissByAFewPercentAtAThousandTokensOrMore) {
  // cuBLAS picks a kernel per shape, and single GEMMs miss the fitted tile model by up to 28 %
  // either way; but a layer's four linear GEMMs together, as a step runs them, stay within 11 %
  // at 816 tokens or more (3.2 % on average): kernel choices do not add up to the 17-33 %
  // per-layer misses of vTrain's host-bound micro-batches (docs/validation.md).
  const ComputeModel model = with_terms(preset_model("dgx-a100", false), fitted_on_all());
  const LayerErrors layers = layer_errors(model, all_gemms(), 800, INFINITY);
  fmt::print("worst GEMM {:.3f}, worst layer {:.3f}, layers' mean |error| {:.3f}\n",
             layers.worst_gemm, layers.worst(), layers.mean_abs);
  EXPECT_EQ(layers.layers, 159u);
  EXPECT_GT(layers.worst_gemm, 0.25);
  EXPECT_LT(layers.worst(), 0.11);
  EXPECT_LT(layers.mean_abs, 0.035);
}

TEST(VidurA100Gemms, Phi2LayersAtTheSizesOfVtrainsWideTp1MicroBatches) {
  // phi-2's layer (hidden 2,560, TP1) at 1,552-2,464 tokens: the GEMM shapes in Vidur's files
  // nearest to vTrain's 2,048-wide TP1 layers at two sequences per micro-batch (2,048 tokens;
  // racksim's step is 13-24 % slow per layer at one to four, docs/validation.md), with k 2,560
  // where those have 2,048. Fitted on the Llama-2 layers alone, the tile
  // model times these layers 4.2 % fast on average (-12.3 to +2.0 %); the a100-vtrain-cluster
  // terms that racksim runs vTrain's rows with time every one of them fast (-11.5 %, -18.9 to
  // -6.0 %). So racksim's GEMMs on those shapes are, if anything, too fast: the rows' per-layer
  // excess is not their GEMMs.
  const std::vector<MeasuredGemm> rows = read_gemms("phi-2");
  ASSERT_EQ(rows.size(), 51u * 4);
  const ComputeModel kernel_fit = with_terms(preset_model("dgx-a100", false), fitted_on_all());
  const ComputeModel vtrain = preset_model("a100-vtrain-cluster", true);
  const LayerErrors fitted = layer_errors(kernel_fit, rows, 0, 2500);
  const LayerErrors calibrated = layer_errors(vtrain, rows, 0, 2500);
  for (const auto& [name, e] : {std::pair{"fitted on the Llama-2 kernels", fitted},
                                std::pair{"a100-vtrain-cluster", calibrated}}) {
    fmt::print("{}: {} layers, {:+.1f} % ({:+.1f} to {:+.1f} %)\n", name, e.layers, e.mean * 100,
               e.lowest * 100, e.highest * 100);
  }
  EXPECT_EQ(fitted.layers, 45u);
  EXPECT_NEAR(fitted.mean, -0.042, 0.005);
  EXPECT_LT(fitted.worst(), 0.13);
  EXPECT_LT(errors(kernel_fit, rows).mean_abs, 0.065);
  EXPECT_LT(calibrated.highest, -0.05);
  EXPECT_NEAR(calibrated.mean, -0.115, 0.005);
}

TEST(VidurH100Gemms, TheSameStructureHoldsOnAnH100AtItsOwnLevels) {
  // The 70B layer's GEMMs on Vidur's H100s (TP1 at 3,360-4,096 tokens, TP8 at 832-1,008): the
  // dgx-h100 preset's BF16 terms (MAMF's 0.801) are 7.8 % fast at burst on the large ones and
  // 6.9 % slow at the held rate (0.862). Fitted alone, a full GPU at 0.69 and one SM well above
  // it (0.89, with 8 us per kernel: these 47 rows do not separate the two), near the held and
  // burst fractions the H200 grid gave (0.730 and 0.850).
  const std::vector<MeasuredGemm> rows = read_gemms("llama2-70b", "h100");
  ASSERT_EQ(rows.size(), 47u * 4);
  auto large = [](const MeasuredGemm& r) { return r.tp == 1; };
  const Errors burst = errors(preset_model("dgx-h100", false), rows, large);
  const Errors held = errors(preset_model("dgx-h100", true), rows, large);
  fmt::print("H100 TP1 GEMMs: burst {:+.1f} %, held {:+.1f} %\n", burst.mean * 100,
             held.mean * 100);
  EXPECT_NEAR(burst.mean, -0.078, 0.005);
  EXPECT_NEAR(held.mean, 0.069, 0.005);
  const TwoRegimes terms = fit(rows, "dgx-h100");
  const Errors fitted = errors(with_terms(preset_model("dgx-h100", false), terms), rows);
  fmt::print("H100: per SM {:.2f}, ceiling {:.2f}, {:.0f} us per kernel, {:+.1f} / {:.1f} %\n",
             terms.per_sm, terms.ceiling, terms.per_kernel_s * 1e6, fitted.mean * 100,
             fitted.mean_abs * 100);
  EXPECT_GT(terms.per_sm - terms.ceiling, 0.12);
  EXPECT_NEAR(terms.ceiling, 0.69, 0.015);
  EXPECT_LT(fitted.mean_abs, 0.05);
}

TEST(VidurH100Gemms, ThePhi2LayerSeparatesOneSmsRateFromTheCeiling) {
  // phi-2's narrower layer (hidden 2,560, TP1) adds GEMMs whose tiles fill part of one wave of
  // the 132 SMs (192-704 tokens) and ones held by reading the weights (1-128 tokens) to the 70B
  // layer's full waves. Fitted on both: one SM at 0.85 of the BF16 peak, a full GPU at 0.69, 6 us
  // per kernel (6.0 % mean |error| over 296 GEMMs), near the burst and held fractions the H200
  // grid gave (0.850 and 0.730). The best fit with one rate for both regimes is 1.5 points
  // worse; the valley in the SM's rate runs from about 0.84 to 0.92 as the time per kernel
  // trades against it. The dgx-h100 preset times phi-2's GEMMs 7.1 % fast at burst (12.9 %
  // mean |error|) and 5.9 % slow held (15.6 %): cuBLAS's kernel choices move single shapes by
  // up to a half (mlp_up_proj: 0.082 ms at 520 tokens, 0.052 ms at 512).
  const std::vector<MeasuredGemm> phi2 = read_gemms("phi-2", "h100");
  ASSERT_EQ(phi2.size(), 27u * 4);
  const Errors burst = errors(preset_model("dgx-h100", false), phi2);
  const Errors held = errors(preset_model("dgx-h100", true), phi2);
  fmt::print("phi-2 on dgx-h100: burst {:+.1f} / {:.1f} %, held {:+.1f} / {:.1f} %\n",
             burst.mean * 100, burst.mean_abs * 100, held.mean * 100, held.mean_abs * 100);
  EXPECT_NEAR(burst.mean, -0.071, 0.005);
  EXPECT_NEAR(held.mean, 0.059, 0.005);
  const std::vector<MeasuredGemm> rows = read_gemms("", "h100");
  ASSERT_EQ(rows.size(), (47u + 27u) * 4);
  const TwoRegimes terms = fit(rows, "dgx-h100");
  const Errors fitted = errors(with_terms(preset_model("dgx-h100", false), terms), rows);
  fmt::print(
      "H100, both layers: per SM {:.2f}, ceiling {:.2f}, {:.0f} us per kernel, {:+.1f} / "
      "{:.1f} %\n",
      terms.per_sm, terms.ceiling, terms.per_kernel_s * 1e6, fitted.mean * 100,
      fitted.mean_abs * 100);
  EXPECT_NEAR(terms.ceiling, 0.69, 0.015);
  EXPECT_NEAR(terms.per_sm, 0.85, 0.03);
  EXPECT_NEAR(terms.per_kernel_s, 6e-6, 1.1e-6);
  EXPECT_LT(fitted.mean_abs, 0.065);
  // The best fit with one rate for both regimes (0.01 and 1 us steps): 0.78 and 5 us, 7.6 %.
  double single = INFINITY;
  for (int rate = 60; rate <= 90; ++rate) {
    for (int us = 0; us <= 10; ++us) {
      const TwoRegimes one_rate{rate / 100.0, rate / 100.0, us * 1e-6};
      single = std::min(
          single, errors(with_terms(preset_model("dgx-h100", false), one_rate), rows).mean_abs);
    }
  }
  fmt::print("one rate for both regimes: {:.1f} %\n", single * 100);
  EXPECT_GT(single - fitted.mean_abs, 0.01);
}

// The groups docs/validation.md's table splits the kernels into.
struct Group {
  std::string name;
  std::function<bool(const MeasuredGemm&)> keep;
};

std::vector<Group> groups() {
  auto of = [](std::string layer, int tp, double lo, double hi) {
    return [=](const MeasuredGemm& r) {
      return r.layer == layer && r.tp == tp && r.m >= lo && r.m <= hi;
    };
  };
  return {{"7B, TP1, 3,456-4,096 tokens", of("llama2-7b", 1, 3000, 5000)},
          {"7B, TP1, 816-1,000", of("llama2-7b", 1, 700, 1100)},
          {"7B, TP1, 1-160", of("llama2-7b", 1, 1, 200)},
          {"7B, TP8, 3,328-4,032", of("llama2-7b", 8, 3000, 5000)},
          {"7B, TP8, 864-1,040", of("llama2-7b", 8, 700, 1100)},
          {"7B, TP8, 1-144", of("llama2-7b", 8, 1, 200)},
          {"70B, TP1, 3,424-4,096", of("llama2-70b", 1, 3000, 5000)},
          {"70B, TP8, 3,392-4,096", of("llama2-70b", 8, 3000, 5000)},
          {"70B, TP8, 840-1,016", of("llama2-70b", 8, 700, 1100)},
          {"all", [](const MeasuredGemm&) { return true; }}};
}

TEST(VidurA100Gemms, PrintsTheTable) {
  const TwoRegimes& terms = fitted_on_all();
  const std::vector<std::pair<std::string, ComputeModel>> models = {
      {"dgx-a100 at burst", preset_model("dgx-a100", false)},
      {"dgx-a100 held", preset_model("dgx-a100", true)},
      {"a100-vtrain-cluster", preset_model("a100-vtrain-cluster", true)},
      {"fitted on these kernels", with_terms(preset_model("dgx-a100", false), terms)}};
  fmt::print("fitted: per SM {:.2f}, ceiling {:.2f}, {:.0f} us per kernel\n", terms.per_sm,
             terms.ceiling, terms.per_kernel_s * 1e6);
  fmt::print("| kernels | GEMMs |");
  for (const auto& [name, model] : models) fmt::print(" {} |", name);
  fmt::print("\n");
  for (const Group& group : groups()) {
    fmt::print("| {} | {} |", group.name, errors(models[0].second, all_gemms(), group.keep).count);
    for (const auto& [name, model] : models) {
      const Errors e = errors(model, all_gemms(), group.keep);
      fmt::print(" {:+.1f} / {:.1f} % |", e.mean * 100, e.mean_abs * 100);
    }
    fmt::print("\n");
  }
  SUCCEED();
}

}  // namespace
}  // namespace racksim::sim
