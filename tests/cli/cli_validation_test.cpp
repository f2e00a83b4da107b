// Three rows of the validation table (docs/validation.md,
// data/published/narayanan-sc21-table1.csv) in both its configurations: the datasheet dgx-a100
// preset with the kernel compute model, and the same with the A100 terms fitted on vTrain's
// measurements (scenarios/calibration/a100-kernel-calibration.textproto), against the
// step times Narayanan et al. (SC'21, Table 1) published. The errors the table records are pinned,
// so a change that moves these predictions shows up here (and the table needs `scripts/validate.py`
// again). Each run is about a second: ANALYTIC collectives and folded replicas. The same for a few
// of vTrain's measured A100 rows, single-node and multi-node, under the fitted terms.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/measurement_floor.h"
#include "tests/support/micro_batch_row.h"
#include "tests/support/run_racksim.h"

namespace racksim {
namespace {

using testing::read_file;
using testing::run_racksim;
using testing::simulated_step_s;
using testing::TempDir;

const std::string kBase =
    std::string(RACKSIM_SOURCE_DIR) + "/scenarios/validation/megatron-gpt-a100.textproto";

// A pinned row of the table: the layout data/published/narayanan-sc21-table1.csv gives it, the
// paper's figures, and the error the table records in each configuration.
struct PinnedRow {
  std::vector<std::string> sets;
  double batch, layers, hidden, gpus;
  double published_tflops_per_gpu;
  double datasheet_error;  // predicted / published step time - 1, as in the table
  double burst_error;      // the same preset at its benchmarks' burst rates
  double transfer_error;
};

const std::vector<PinnedRow>& pinned_rows() {
  static const std::vector<PinnedRow> rows = {
      {{"model.hidden_size=3072", "model.num_heads=32", "model.num_layers=30",
        "model.ffn_hidden_size=12288", "hardware.nodes=8", "layout.tp=2", "layout.pp=1",
        "layout.dp=32", "training.micro_batch_size=16", "training.global_batch_size=512",
        "training.overlap_grad_reduce=true", "training.grad_bucket_elements=13107200"},
       512,
       30,
       3072,
       64,
       138,
       -0.0827,
       -0.1630,
       0.0437},
      {{"model.hidden_size=6144", "model.num_heads=48", "model.num_layers=40",
        "model.ffn_hidden_size=24576", "hardware.nodes=32", "layout.tp=8", "layout.pp=1",
        "layout.dp=32", "training.micro_batch_size=8", "training.global_batch_size=1024",
        "training.overlap_grad_reduce=true", "training.grad_bucket_elements=13107200"},
       1024,
       40,
       6144,
       256,
       135,
       -0.0589,
       -0.1433,
       -0.0491},
      {{"model.hidden_size=12288", "model.num_heads=96", "model.num_layers=80",
        "model.ffn_hidden_size=49152", "hardware.nodes=192", "layout.tp=8", "layout.pp=8",
        "layout.dp=24", "layout.virtual_stages=2", "training.schedule=INTERLEAVED_1F1B",
        "training.micro_batch_size=2", "training.global_batch_size=2304"},
       2304,
       80,
       12288,
       1536,
       148,
       -0.0076,
       -0.1119,
       -0.0765},
  };
  return rows;
}

// The paper's FLOPs per step (its eq. 3, recompute counted), sequence 2048, vocabulary 51,200.
double paper_flops(double batch, double layers, double hidden) {
  const double s = 2048, v = 51200;
  return 96 * batch * s * layers * hidden * hidden *
         (1 + s / (6 * hidden) + v / (16 * layers * hidden));
}

// Every pinned row under one configuration (`extra` overrides) against its recorded error.
void expect_recorded_errors(double PinnedRow::*recorded, const std::vector<std::string>& extra) {
  for (const PinnedRow& row : pinned_rows()) {
    const double published_s = paper_flops(row.batch, row.layers, row.hidden) /
                               (row.gpus * row.published_tflops_per_gpu * 1e12);
    std::vector<std::string> sets = row.sets;
    sets.insert(sets.end(), extra.begin(), extra.end());
    const double error = simulated_step_s(kBase, sets) / published_s - 1;
    // The model is deterministic: the tolerance covers rounding of the recorded value only.
    EXPECT_NEAR(error, row.*recorded, 0.005) << row.sets[0];
  }
}

// The datasheet preset, nothing fitted: the table's "datasheet" column, its FLOP-bound kernels at
// the throughput held at the power limit (0.862 of the burst rates, measured on a GH100).
TEST(NarayananSc21, DatasheetA100ErrorsOfThreeRowsArePinned) {
  expect_recorded_errors(&PinnedRow::datasheet_error, {});
}

// The same preset at its benchmarks' burst rates: the table's "burst" column.
TEST(NarayananSc21, BurstA100ErrorsOfThreeRowsArePinned) {
  expect_recorded_errors(&PinnedRow::burst_error, {"hardware.compute.sustained_clock_ratio=1"});
}

// The GEMM rates, host floor and multi-node step cost fitted on vTrain's A100 cluster (another
// framework), with that cluster's measured all-reduce tables, applied unchanged to Selene: the
// table's "transfer" column.
TEST(NarayananSc21, TransferFromVtrainFitErrorsOfThreeRowsArePinned) {
  expect_recorded_errors(&PinnedRow::transfer_error,
                         {"calibration=" + std::string(RACKSIM_SOURCE_DIR) +
                          "/scenarios/calibration/a100-kernel-calibration.textproto"});
}

// The predicted step time of one of vTrain's rows (its `model` and `row` overrides) on its base
// scenario under the A100 terms fitted on vTrain's rows
// (scenarios/calibration/a100-kernel-calibration.textproto).
double vtrain_step_s(const std::vector<std::string>& model, const std::vector<std::string>& row) {
  std::vector<std::string> sets = {"calibration=" + std::string(RACKSIM_SOURCE_DIR) +
                                   "/scenarios/calibration/a100-kernel-calibration.textproto"};
  sets.insert(sets.end(), model.begin(), model.end());
  sets.insert(sets.end(), row.begin(), row.end());
  const std::string base =
      std::string(RACKSIM_SOURCE_DIR) + "/scenarios/calibration/a100-vtrain-kernel-base.textproto";
  return simulated_step_s(base, sets);
}

// predicted / measured - 1 of one of vTrain's rows.
double vtrain_error(const std::vector<std::string>& model, const std::vector<std::string>& row,
                    double measured_s) {
  return vtrain_step_s(model, row) / measured_s - 1;
}

// The overrides of one vTrain layout: TP, PP, DP and micro-batch.
std::vector<std::string> layout(int tp, int pp, int dp, int micro_batch) {
  return {fmt::format("layout.tp={}", tp), fmt::format("layout.pp={}", pp),
          fmt::format("layout.dp={}", dp),
          fmt::format("training.micro_batch_size={}", micro_batch)};
}

// vTrain's single-node rows (scenarios/calibration/a100-single-node.csv) under the A100 terms
// fitted on every tenth of them: a TP8 row with one sequence per micro-batch (2 heads per rank, so
// Megatron's fused softmax does not apply and PyTorch runs it in FP32, five kernels) and a TP2
// row at micro-batch 4 that the model misses by +21 % (its GEMM shapes run faster than the tile
// model gives them), both as recorded in scenarios/calibration/a100-single-node-fit.log.txt.
TEST(VtrainSingleNode, ErrorsOfTwoRowsUnderTheFittedTermsArePinned) {
  const std::vector<std::string> model = {
      "hardware.nodes=1",         "sim.fold_replicas=false",  "model.hidden_size=1024",
      "model.num_heads=16",       "model.num_layers=20",      "model.ffn_hidden_size=4096",
      "training.seq_length=1024", "hardware.gpus_per_node=8", "layout.pp=1"};
  EXPECT_NEAR(vtrain_error(model,
                           {"layout.tp=8", "layout.dp=1", "training.micro_batch_size=1",
                            "training.global_batch_size=8"},
                           0.8158),
              -0.112, 0.005);
  EXPECT_NEAR(vtrain_error(model,
                           {"layout.tp=2", "layout.dp=4", "training.micro_batch_size=4",
                            "training.global_batch_size=32"},
                           0.1464),
              0.212, 0.005);
}

// vTrain's multi-node 18.4B rows (scenarios/calibration/a100-multi-node.csv, 256 A100) under the
// fitted terms and measured all-reduces, as recorded in
// scenarios/calibration/a100-kernel-fit.log.txt: TP8 DP32
// (-0.5 %), TP16 at micro-batch 2 (3 heads per rank, the softmax in FP32: +0.9 %), and TP4 PP2,
// one of the two layouts no term explains (-17.1 %).
TEST(VtrainMultiNode, ErrorsOfThreeRowsUnderTheFittedTermsArePinned) {
  const std::vector<std::string> model = {
      "model.hidden_size=6144",         "model.num_heads=48",       "model.num_layers=40",
      "model.ffn_hidden_size=24576",    "training.seq_length=2048", "hardware.nodes=32",
      "training.global_batch_size=1024"};
  EXPECT_NEAR(vtrain_error(model, layout(8, 1, 32, 4), 9.9276), -0.005, 0.005);
  EXPECT_NEAR(vtrain_error(model, layout(16, 1, 16, 2), 20.4148), 0.009, 0.005);
  EXPECT_NEAR(vtrain_error(model, layout(4, 2, 32, 4), 10.9504), -0.171, 0.005);
}

// The property `racksim calibrate`'s measurement floor rests on (analysis/measurement_floor.h):
// without pipeline stages, a larger micro-batch never makes the predicted step longer. Checked
// on the two families of vTrain's multi-node rows whose measurements break it (3.6B TP8, whose
// micro-batch 64 measures twice micro-batch 32, and 18.4B TP8, whose 16 measures 9 % over 8).
TEST(VtrainMultiNode, PredictionsDoNotRiseWithTheMicroBatchWithoutPipelineStages) {
  struct Family {
    std::vector<std::string> sets;
    std::vector<int> micro_batches;
  };
  const std::vector<Family> families = {
      {{"model.hidden_size=3072", "model.num_heads=32", "model.num_layers=30",
        "model.ffn_hidden_size=12288", "training.seq_length=2048", "hardware.nodes=8",
        "layout.tp=8", "layout.pp=1", "layout.dp=8", "training.global_batch_size=512"},
       {2, 4, 8, 16, 32, 64}},
      {{"model.hidden_size=6144", "model.num_heads=48", "model.num_layers=40",
        "model.ffn_hidden_size=24576", "training.seq_length=2048", "hardware.nodes=32",
        "layout.tp=8", "layout.pp=1", "layout.dp=32", "training.global_batch_size=1024"},
       {2, 4, 8, 16}},
  };
  for (const Family& family : families) {
    double previous = 0;
    for (int micro_batch : family.micro_batches) {
      const double step =
          vtrain_step_s(family.sets, {fmt::format("training.micro_batch_size={}", micro_batch)});
      if (previous > 0) {
        EXPECT_LE(step, previous) << family.sets[0] << " mb " << micro_batch;
      }
      previous = step;
    }
  }
}

// The floor's model links (analysis/measurement_floor.h): a wider or deeper model, all else the
// same, never gets a shorter predicted step. Checked where vTrain's single-node measurements
// break it: TP4 and TP8 at micro-batches 1 and 2, the 1,024-wide models measured slower than
// the 2,048-wide ones.
TEST(VtrainSingleNode, PredictionsGrowWithTheModelsWidthAndDepth) {
  auto step = [](int hidden, int layers, int tp, int micro_batch) {
    return vtrain_step_s(
        {fmt::format("model.hidden_size={}", hidden), "model.num_heads=16",
         fmt::format("model.num_layers={}", layers),
         fmt::format("model.ffn_hidden_size={}", 4 * hidden), "training.seq_length=1024",
         "hardware.nodes=1", "hardware.gpus_per_node=8", "sim.fold_replicas=false",
         "training.global_batch_size=8"},
        layout(tp, 1, 8 / tp, micro_batch));
  };
  for (int tp : {4, 8}) {
    for (int micro_batch : {1, 2}) {
      const double narrow = step(1024, 24, tp, micro_batch);
      EXPECT_LE(narrow, step(2048, 24, tp, micro_batch)) << "TP" << tp << " mb " << micro_batch;
      EXPECT_LE(step(1024, 12, tp, micro_batch), narrow) << "TP" << tp << " mb " << micro_batch;
    }
  }
}

// With pipeline stages the floor allows a step to grow with the micro-batch as far as a pipeline's
// fill and drain can make it (analysis/measurement_floor.h); racksim's own predictions must be
// steps it allows, or the floor would not bound racksim. Checked on the two pipelined families
// whose measurements it finds inconsistent: 39.1B TP4 PP16 DP8 (micro-batches 2 to 12 on 512
// GPUs) and 18.4B TP4 PP2 DP32 (2 to 8 on 256).
TEST(VtrainMultiNode, PipelinedPredictionsAreStepsTheMeasurementFloorAllows) {
  struct Family {
    std::vector<std::string> sets;
    int stages = 1;
    double sequences = 0;  // per pipeline per step
    std::vector<int> micro_batches;
  };
  const std::vector<Family> families = {
      {{"model.hidden_size=8192", "model.num_heads=64", "model.num_layers=48",
        "model.ffn_hidden_size=32768", "hardware.nodes=64", "layout.tp=4", "layout.pp=16",
        "layout.dp=8", "training.global_batch_size=1536"},
       16,
       1536 / 8.0,
       {2, 3, 4, 6, 12}},
      {{"model.hidden_size=6144", "model.num_heads=48", "model.num_layers=40",
        "model.ffn_hidden_size=24576", "training.seq_length=2048", "hardware.nodes=32",
        "layout.tp=4", "layout.pp=2", "layout.dp=32", "training.global_batch_size=1024"},
       2,
       1024 / 32.0,
       {2, 4, 8}},
  };
  for (const Family& family : families) {
    std::vector<analysis::MicroBatchRow> rows;
    for (int micro_batch : family.micro_batches) {
      const double step =
          vtrain_step_s(family.sets, {fmt::format("training.micro_batch_size={}", micro_batch)});
      rows.push_back(testing::micro_batch_row("predicted", micro_batch, family.stages,
                                              family.sequences / micro_batch, step));
    }
    const auto floor = analysis::micro_batch_floor(rows);
    EXPECT_EQ(floor.families_broken, 0u) << family.sets[0];
    EXPECT_NEAR(floor.mean_abs_relative, 0, 1e-9) << family.sets[0];
  }
}

// vTrain's measured 39.1B and 175B rows on 512 A100
// (data/measured/vtrain-a100-multi-node-large.csv), larger than any row the A100 terms were fitted
// on, predicted under those terms unchanged: the "transfer" column of
// data/measured/vtrain-a100-multi-node-large-results.csv. A 175B TP4 PP16 row (-3.3 %), a 39.1B TP8
// PP4 row (-3.6 %) and a 39.1B TP2 PP16 row, one of the six TP2 rows the model misses by 16-38 %
// (-38.1 %; docs/validation.md says what is known of them).
TEST(VtrainLarge, TransferErrorsOfThreeRowsArePinned) {
  auto model = [](int hidden, int heads, int layers) {
    return std::vector<std::string>{fmt::format("model.hidden_size={}", hidden),
                                    fmt::format("model.num_heads={}", heads),
                                    fmt::format("model.num_layers={}", layers),
                                    fmt::format("model.ffn_hidden_size={}", 4 * hidden),
                                    "hardware.nodes=64",
                                    "training.global_batch_size=1536"};
  };
  const std::vector<std::string> gpt_175b = model(12288, 96, 96), gpt_39b = model(8192, 64, 48);
  EXPECT_NEAR(vtrain_error(gpt_175b, layout(4, 16, 8, 2), 54.2559), -0.0332, 0.005);
  EXPECT_NEAR(vtrain_error(gpt_39b, layout(8, 4, 16, 2), 14.7134), -0.0357, 0.005);
  EXPECT_NEAR(vtrain_error(gpt_39b, layout(2, 16, 16, 3), 26.1888), -0.3811, 0.005);
}

// The large vTrain table is vTrain's file rewritten by hand into one override per column, so a row
// can be mistyped (one was: a micro-batch-6 row filed as a second run of micro-batch 4). Each
// row's name spells its layout; the columns must agree with it, fill the 512 GPUs, and only a row
// named `-run2` may repeat a layout, next to its first run.
TEST(VtrainLarge, EveryRowsColumnsAgreeWithItsName) {
  std::istringstream file(read_file(std::string(RACKSIM_SOURCE_DIR) +
                                    "/data/measured/vtrain-a100-multi-node-large.csv"));
  std::vector<std::string> header;
  std::map<std::string, int> rows_per_name;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    if (header.empty()) {
      header = fields;
      continue;
    }
    ASSERT_EQ(fields.size(), header.size()) << line;
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < fields.size(); ++i) row[header[i]] = fields[i];
    const int tp = std::stoi(row.at("layout.tp")), pp = std::stoi(row.at("layout.pp")),
              dp = std::stoi(row.at("layout.dp"));
    EXPECT_EQ(tp * pp * dp, 8 * std::stoi(row.at("hardware.nodes"))) << line;
    const std::string layout_name =
        fmt::format("tp{}-pp{}-dp{}-mb{}", tp, pp, dp, row.at("training.micro_batch_size"));
    std::string name = row.at("name");
    if (name.size() > 5 && name.substr(name.size() - 5) == "-run2") name.resize(name.size() - 5);
    EXPECT_EQ(name.substr(name.size() - layout_name.size()), layout_name) << line;
    ++rows_per_name[name];
  }
  EXPECT_EQ(rows_per_name.size(), 67u);  // 68 rows, one layout measured twice
  for (const auto& [name, count] : rows_per_name) EXPECT_LE(count, 2) << name;
}

// NVIDIA's published Llama 3 70B FP8 row (Megatron-Bridge 25.11, 64 H100, TP4 PP8 VP5, GBS 128:
// 1,602 tokens/s per GPU; data/published/megatron-bridge-h100.csv) on the datasheet dgx-h100
// preset: the base scenario is that row, its TP communication overlapped and its FP8 scaled from
// each tensor's current amax (fp8_cs) as the recipe does, the output layer's weight gradients of
// 22 micro-batches deferred into the pipeline's drain. Published step = 128 x 8192 / (64 x
// 1602) s. The preset runs every FLOP-bound kernel at the throughput a Hopper GPU holds at its
// 700 W limit (sustained_clock_ratio 0.862, measured on an H200) and its FP8 casts at the
// bandwidth Transformer Engine's cast-transpose reached on an H100 (fp8_cast 0.389): 5.0 % too
// slow; at its benchmarks' burst rates (ratio 1, the tables' "burst" column) 6.8 % too fast.
// With delayed scaling's one-pass casts the row is 3.0 points faster; without the deferral
// (training.defer_embedding_wgrad=false) 1.3 points slower.
TEST(MegatronBridgeH100, DatasheetErrorOfTheBaseRowIsPinned) {
  const std::string base = std::string(RACKSIM_SOURCE_DIR) +
                           "/scenarios/validation/megatron-bridge-llama3-h100.textproto";
  const double published_s = 128.0 * 8192 / (64 * 1602.0);
  EXPECT_NEAR(simulated_step_s(base, {}) / published_s - 1, 0.050, 0.005);
  EXPECT_NEAR(simulated_step_s(base, {"training.fp8_scaling=DELAYED"}) / published_s - 1, 0.020,
              0.005);
  const std::string burst = "hardware.compute.sustained_clock_ratio=1";
  EXPECT_NEAR(simulated_step_s(base, {burst}) / published_s - 1, -0.068, 0.005);
  EXPECT_NEAR(simulated_step_s(base, {burst, "training.fp8_scaling=DELAYED"}) / published_s - 1,
              -0.098, 0.005);
}

// NVIDIA's Llama 3 8B FP8 rows on Blackwell (Megatron-Bridge 25.11, 8 GPUs, TP1 DP8, micro-batch 2,
// batch 128; data/published/megatron-bridge-blackwell.csv) on the datasheet presets, nothing
// fitted: the Megatron-Bridge base with each row's preset and layout. The presets' GEMMs are the
// tile model fitted to XLA's sm_100 grid, and every FLOP-bound kernel runs at the GH100's held
// share, borrowed (sustained_clock_ratio 0.862); attention at cuDNN's measured share on each die
// (0.54 B200/GB200, 0.61 Blackwell Ultra). DGX B200 (30,624 tokens/s per GPU) and GB200 (31,508)
// come out 12 and 17 % too fast, GB300 (37,556) 4 %: the presets give GB300 and GB200 the same
// dense peaks, and of the published GB300's 1.19 times GB200's rate the attention explains 1.03
// (docs/validation.md). At the burst rates the B200 row is 22 % too fast.
TEST(MegatronBridgeBlackwell, DatasheetErrorsOfThe8BRowsArePinned) {
  const std::string base = std::string(RACKSIM_SOURCE_DIR) +
                           "/scenarios/validation/megatron-bridge-llama3-h100.textproto";
  auto row = [](const char* preset, const char* nodes) {
    return std::vector<std::string>{fmt::format("hardware.preset={}", preset),
                                    fmt::format("hardware.nodes={}", nodes),
                                    "model.preset=llama3-8b",
                                    "layout.tp=1",
                                    "layout.pp=1",
                                    "layout.dp=8",
                                    "layout.virtual_stages=1",
                                    "layout.sequence_parallel=false",
                                    "training.schedule=ONE_F_ONE_B",
                                    "training.micro_batch_size=2",
                                    "training.defer_embedding_wgrad=false",
                                    "training.wgrad_deferral_limit=0"};
  };
  const double step_per_rate = 128.0 * 8192 / 8;  // published step = this / tokens/s per GPU
  EXPECT_NEAR(simulated_step_s(base, row("hgx-b200", "1")) / (step_per_rate / 30624) - 1, -0.123,
              0.005);
  EXPECT_NEAR(simulated_step_s(base, row("gb200-nvl72", "2")) / (step_per_rate / 31508) - 1, -0.169,
              0.005);
  EXPECT_NEAR(simulated_step_s(base, row("gb300-nvl72", "2")) / (step_per_rate / 37556) - 1, -0.038,
              0.005);
  std::vector<std::string> burst = row("hgx-b200", "1");
  burst.push_back("hardware.compute.sustained_clock_ratio=1");
  EXPECT_NEAR(simulated_step_s(base, burst) / (step_per_rate / 30624) - 1, -0.219, 0.005);
}

// NVIDIA's gpt-oss-120b BF16 rows (Megatron-Bridge 26.02, 64 GPUs, EP64, micro-batch 4, batch
// 1,280 of 4,096 tokens; data/published/megatron-bridge-gpt-oss.csv) on the datasheet presets,
// nothing fitted, each with what its recipe runs (the norms' and the experts' activation's
// recompute; on GB200 the all-to-all overlap). GB200 NVL72 keeps the all-to-all inside one NVLink
// domain (15,784 tokens/s per GPU), DGX B200 sends 7/8 of it over InfiniBand (8,047). racksim is
// 53 and 25 % too fast and puts the racks 3.15 times apart where the pages put them 1.96 times
// (docs/validation.md: not explained). The windowed layers' attention over 128 keys is pinned
// beside them.
TEST(MegatronBridgeGptOss, DatasheetErrorsOfTheEp64RowsArePinned) {
  const std::string base =
      std::string(RACKSIM_SOURCE_DIR) + "/scenarios/validation/megatron-bridge-gpt-oss.textproto";
  const double published_gb200_s = 1280.0 * 4096 / (64 * 15784);
  const double published_b200_s = 1280.0 * 4096 / (64 * 8047);
  // Both recipes recompute the norms and the experts' activation; the GB200 one overlaps the
  // all-to-alls with compute (Megatron-Core's combined 1F1B).
  const std::vector<std::string> recompute = {"training.recompute=SELECTIVE",
                                              "training.recompute_modules=LAYERNORM+MOE_ACT"};
  std::vector<std::string> gb200 = {"hardware.preset=gb200-nvl72", "hardware.nodes=16",
                                    "training.moe_a2a_overlap=true"};
  gb200.insert(gb200.end(), recompute.begin(), recompute.end());
  const double gb200_s = simulated_step_s(base, gb200);
  const double b200_s = simulated_step_s(base, recompute);
  EXPECT_NEAR(gb200_s / published_gb200_s - 1, -0.532, 0.005);
  EXPECT_NEAR(b200_s / published_b200_s - 1, -0.247, 0.005);
  EXPECT_NEAR(b200_s / gb200_s, 3.15, 0.02);
  // Every layer at full attention instead: the windowed layers' share of the step.
  const double all_full_s =
      simulated_step_s(base, {"model.hybrid.layer_pattern=FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"});
  EXPECT_GT(all_full_s, b200_s * 1.01);
}

// NVIDIA's Qwen3 MoE rows of the same pages (data/published/megatron-bridge-moe.csv) on the
// datasheet presets, nothing fitted. Qwen3-235B-A22B in BF16 on 256 GB200 (the base scenario,
// 4,916 tokens/s per GPU) is 16 % too fast and in FP8 on 256 H100 (1,575), with the recipe's
// all-to-all overlap, 27 % too fast (10 % too slow without it), where the finer Qwen3-30B-A3B in
// FP8 on 16 H100 (5,275) is 64 % too fast: the pages ran that layout at twice this rate with
// token dropping in release 25.09 (docs/validation.md: not explained).
TEST(MegatronBridgeMoe, DatasheetErrorsOfThreeRowsArePinned) {
  const std::string base =
      std::string(RACKSIM_SOURCE_DIR) + "/scenarios/validation/megatron-bridge-moe.textproto";
  const std::vector<std::string> h100 = {"hardware.preset=dgx-h100", "hardware.gpus_per_node=8",
                                         "hardware.scale_up.domain_size=8", "training.dtype=FP8",
                                         "training.micro_batch_size=1",
                                         // the H100 recipes' combined 1F1B (data file's column)
                                         "training.moe_a2a_overlap=true"};
  auto with = [](std::vector<std::string> sets, std::initializer_list<std::string> more) {
    sets.insert(sets.end(), more);
    return sets;
  };
  const double gb200_s = simulated_step_s(base, {});
  EXPECT_NEAR(gb200_s / (8192.0 * 4096 / (256 * 4916)) - 1, -0.158, 0.005);
  const double h100_s = simulated_step_s(
      base,
      with(h100, {"hardware.nodes=32", "layout.tp=2", "layout.virtual_stages=4", "layout.dp=16",
                  "layout.sequence_parallel=true", "training.global_batch_size=2048"}));
  EXPECT_NEAR(h100_s / (2048.0 * 4096 / (256 * 1575)) - 1, -0.274, 0.005);
  const double small_s = simulated_step_s(
      base, with(h100, {"model.preset=qwen3-30b-a3b", "hardware.nodes=2", "layout.pp=2",
                        "layout.virtual_stages=24", "layout.ep=8", "layout.dp=8",
                        "layout.account_for_embedding_in_split=false",
                        "layout.account_for_loss_in_split=false", "training.micro_batch_size=2",
                        "training.global_batch_size=512"}));
  EXPECT_NEAR(small_s / (512.0 * 4096 / (16 * 5275)) - 1, -0.639, 0.005);
}

// NVIDIA's NeMo 24.07 FP8 pre-training rows on DGX H100 (data/published/nemo-24.07-h100.csv) on
// the datasheet dgx-h100 preset, nothing fitted. The base scenario is the GPT-3 5B row (64 GPUs,
// TP1 DP64, micro-batch 4, batch 2,048 of 2,048 tokens: 22,521 tokens/s per GPU); the Llama 2 70B
// row (TP4 PP4 VP20 DP4) and the 175B row on 128 GPUs (TP4 PP8 VP6 DP4) are overrides of it.
// With the FP8 casts at the Hopper presets' own rate for them and both residual adds of each
// layer (the GPT-3 rows' with their dropout masks), the 4,096-wide models stay 5-13 % too fast
// where the large ones are within 5 % (docs/validation.md: what the small models still lack is
// not in the casts); these pins keep that visible. The base carries the GPT-3 rows' hidden
// dropout and learned positions; the Llama 2 row turns the dropout off and rotates its queries
// and keys, as its data row does.
TEST(NemoH100, DatasheetErrorsOfThreeRowsArePinned) {
  const std::string base =
      std::string(RACKSIM_SOURCE_DIR) + "/scenarios/validation/nemo-h100.textproto";
  const double published_s = 2048.0 * 2048 / (64 * 22521.0);
  const double step_s = simulated_step_s(base, {});
  EXPECT_NEAR(step_s / published_s - 1, -0.111, 0.005);
  // The later release's figure for the same layout (data/published/nemo-docs-24.12-h100.csv).
  EXPECT_NEAR(step_s / (2048.0 * 2048 / (64 * 23406.0)) - 1, -0.076, 0.005);
  EXPECT_NEAR(
      simulated_step_s(base, {"hardware.compute.sustained_clock_ratio=1"}) / published_s - 1,
      -0.207, 0.005);
  const std::vector<std::string> llama2_70b = {"model.hidden_dropout=0",
                                               "model.position_encoding=ROTARY",
                                               "model.hidden_size=8192",
                                               "model.num_layers=80",
                                               "model.num_heads=64",
                                               "model.num_kv_heads=8",
                                               "model.ffn_hidden_size=28672",
                                               "model.activation=SWIGLU",
                                               "model.vocab_size=32256",
                                               "model.tie_embeddings=false",
                                               "layout.tp=4",
                                               "layout.pp=4",
                                               "layout.dp=4",
                                               "layout.virtual_stages=20",
                                               "layout.sequence_parallel=true",
                                               "training.schedule=INTERLEAVED_1F1B",
                                               "training.micro_batch_size=1",
                                               "training.global_batch_size=128",
                                               "training.seq_length=4096"};
  EXPECT_NEAR(simulated_step_s(base, llama2_70b) / (128.0 * 4096 / (64 * 1707.0)) - 1, -0.041,
              0.005);
  const std::vector<std::string> gpt3_175b = {"model.hidden_size=12288",
                                              "model.num_layers=96",
                                              "model.num_heads=96",
                                              "model.num_kv_heads=96",
                                              "model.ffn_hidden_size=49152",
                                              "model.vocab_size=50688",
                                              "hardware.nodes=16",
                                              "layout.tp=4",
                                              "layout.pp=8",
                                              "layout.dp=4",
                                              "layout.virtual_stages=6",
                                              "layout.sequence_parallel=true",
                                              "training.schedule=INTERLEAVED_1F1B",
                                              "training.micro_batch_size=1",
                                              "training.global_batch_size=256",
                                              "training.defer_embedding_wgrad=true",
                                              "training.wgrad_deferral_limit=50"};
  EXPECT_NEAR(simulated_step_s(base, gpt3_175b) / (256.0 * 2048 / (128 * 726.0)) - 1, 0.019, 0.005);
}

// MosaicML's MPT benchmarks on A100 80GB in BF16 with FSDP
// (data/published/llm-foundry-mpt-a100.csv) on the datasheet dgx-a100 preset, nothing fitted.
// The base scenario is the MPT-7B row at 2,048 tokens (8 GPUs, micro-batch 6, batch 96: 4,641
// tokens/s per GPU); the 1B row at 32,768 tokens (micro-batch 1, batch 32: 6,275 tokens/s per
// GPU) is where attention dominates. Those runs' FlashAttention 1.x kernel ran at about half the
// preset's FlashAttention-2 rate (0.6 of the peak); at half, the long row goes from 31 % too
// fast to 13 % too slow, while the 7B row, with attention 7.5 % of its FLOPs, moves 5 points
// (docs/validation.md).
TEST(LlmFoundryMptA100, DatasheetErrorsOfTwoRowsArePinned) {
  const std::string base =
      std::string(RACKSIM_SOURCE_DIR) + "/scenarios/validation/llm-foundry-mpt-a100.textproto";
  const double published_7b_s = 96.0 * 2048 / (8 * 4641.0);
  EXPECT_NEAR(simulated_step_s(base, {}) / published_7b_s - 1, -0.034, 0.005);
  EXPECT_NEAR(simulated_step_s(base, {"hardware.compute.attention=0.3"}) / published_7b_s - 1,
              0.020, 0.005);
  const std::vector<std::string> mpt_1b_32k = {
      "model.hidden_size=2048",      "model.num_layers=24",          "model.num_heads=16",
      "model.num_kv_heads=16",       "model.ffn_hidden_size=8192",   "training.seq_length=32768",
      "training.micro_batch_size=1", "training.global_batch_size=32"};
  const double published_1b_s = 32.0 * 32768 / (8 * 6275.0);
  EXPECT_NEAR(simulated_step_s(base, mpt_1b_32k) / published_1b_s - 1, -0.313, 0.005);
  std::vector<std::string> fa1 = mpt_1b_32k;
  fa1.push_back("hardware.compute.attention=0.3");
  EXPECT_NEAR(simulated_step_s(base, fa1) / published_1b_s - 1, 0.126, 0.005);
}

// DeepSeek-V3's reported 180K H800 GPU hours per trillion tokens (data/published/
// deepseek-v3-h800.csv) on the datasheet hgx-h800 preset: the base scenario is that row (2,048
// GPUs, DualPipe PP16, EP64, batch 15,360 of 4,096 tokens). Published step = 15360 x 4096 x
// 2048 x 180e3 x 3600 / 1e12 / 2048 s.
TEST(DeepSeekV3H800, DatasheetErrorOfTheReportedThroughputIsPinned) {
  const std::string base =
      std::string(RACKSIM_SOURCE_DIR) + "/scenarios/validation/deepseek-v3-h800.textproto";
  const double published_s = 15360.0 * 4096 * 180e3 * 3600 / 1e12 / 2048;
  // With DeepSeek's traffic (node-limited routing, one InfiniBand copy per node, FP8 dispatch),
  // its 20 communication SMs and FP8 GEMMs as DeepGEMM runs them, at the clock a Hopper GPU holds
  // at 700 W, its FP8 casts at the Hopper presets' cast bandwidth, RMSNorm, the MLA
  // up-projections and the MoE SwiGLU's output recomputed as the report says: 6.1 % faster than
  // the whole-run average; at the benchmarks' burst rates 14.5 % (docs/validation.md).
  EXPECT_NEAR(simulated_step_s(base, {}) / published_s - 1, -0.061, 0.005);
  EXPECT_NEAR(
      simulated_step_s(base, {"hardware.compute.sustained_clock_ratio=1"}) / published_s - 1,
      -0.145, 0.005);
}

}  // namespace
}  // namespace racksim
