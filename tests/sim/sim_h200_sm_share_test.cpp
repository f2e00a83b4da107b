// GEMMs on fewer SMs, measured on one H200 SXM (data/measured/h200-kernels/carveout/,
// scripts/device/measure-sm-carveout.py): the GEMMs Transformer Engine runs beside its
// overlapped reduce-scatters, FP8 through cuBLASLt told to leave 0 to 66 of the 132 SMs free
// (PyTorch's SM carve-out; its BF16 path, plain cuBLAS, ignores the knob), each at burst.
// racksim times such a GEMM with the tile model over the SMs left (KernelShape.reserved_sms,
// training.tp_comm_overlap_sms), each at the full GPU's per-SM rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/compute_model.h"
#include "tests/support/compute_ops.h"
#include "tests/support/csv_rows.h"
#include "topologies/hardware_presets.h"

namespace racksim::sim {
namespace {

const std::string kFile =
    std::string(RACKSIM_SOURCE_DIR) + "/data/measured/h200-kernels/carveout/carveout.csv";

struct Carved {
  std::string shape, dtype;
  double m = 0, k = 0, n = 0, carveout = 0, seconds = 0;
};

std::vector<Carved> read_carved() {
  std::vector<Carved> out;
  for (const testing::CsvRow& row : testing::read_csv_rows(kFile)) {
    out.push_back({row.at("shape"), row.at("dtype"), testing::cell_number(row, "m"),
                   testing::cell_number(row, "k"), testing::cell_number(row, "n"),
                   testing::cell_number(row, "carveout_sms"),
                   testing::cell_number(row, "ms") / 1e3});
  }
  return out;
}

// The measured time of the same shape and dtype with nothing carved out.
double full_gpu_s(const std::vector<Carved>& rows, const Carved& r) {
  for (const Carved& other : rows) {
    if (other.shape == r.shape && other.dtype == r.dtype && other.carveout == 0)
      return other.seconds;
  }
  ADD_FAILURE() << r.shape;
  return 0;
}

// racksim's slowdown of a forward FP8 GEMM with `reserved` SMs held by a kernel beside it.
double modelled_slowdown(const Carved& r) {
  const ComputeModel model = ComputeModel::from_hardware(*topo::hardware_preset("dgx-h200"));
  const Op op = testing::compute_op(OpClass::kGemm, 2 * r.m * r.k * r.n, 0, DataType::kFp8);
  KernelShape shape{static_cast<float>(r.m), static_cast<float>(r.k), static_cast<float>(r.n), 1,
                    GemmPass::kForward};
  const double full = model.duration_s(op, shape);
  shape.reserved_sms = static_cast<float>(r.carveout);
  return model.duration_s(op, shape) / full;
}

// The mean measured slowdown over the six shapes at one carve-out, and the model's.
std::pair<double, double> mean_slowdowns(double carveout) {
  const std::vector<Carved> rows = read_carved();
  double measured = 0, model = 0;
  int shapes = 0;
  for (const Carved& r : rows) {
    if (r.dtype != "fp8" || r.carveout != carveout) continue;
    measured += r.seconds / full_gpu_s(rows, r);
    model += modelled_slowdown(r);
    ++shapes;
  }
  EXPECT_EQ(shapes, 6) << carveout;
  return {measured / shapes, model / shapes};
}

TEST(H200SmShare, AGemmOnFewerSmsSlowsLessThanItsShareOfThem) {
  // With 16 SMs carved out (training.tp_comm_overlap_sms' default) the GEMMs take 3-10 % longer,
  // 6 % on average, where the tile model over the 116 SMs left says 12 %; with half of them
  // carved out, 1.56-1.74 x against 2.0. Fewer busy SMs share the GPU's power and memory
  // between them, so each runs faster: throughput goes as about the 0.72th power of the SMs
  // used. Idle SMs, not SMs running a communication kernel, which draws power and bandwidth of
  // its own, so this bounds the overlapped GEMMs' speed from above rather than timing them;
  // racksim keeps the full-GPU per-SM rate.
  const auto [measured_16, model_16] = mean_slowdowns(16);
  EXPECT_NEAR(measured_16, 1.058, 0.005);
  EXPECT_NEAR(model_16, 1.134, 0.005);
  const auto [measured_66, model_66] = mean_slowdowns(66);
  EXPECT_NEAR(measured_66, 1.639, 0.005);
  EXPECT_NEAR(model_66, 1.979, 0.005);
  EXPECT_NEAR(std::log(1 / measured_66) / std::log(66.0 / 132.0), 0.72, 0.01);
  for (const Carved& r : read_carved()) {
    if (r.dtype == "fp8" && r.carveout > 0) {
      EXPECT_LT(r.seconds / full_gpu_s(read_carved(), r), modelled_slowdown(r) + 0.025)
          << r.shape << " " << r.carveout;
    }
  }
}

// beside/beside.csv (measure-sm-carveout.py --only beside): the FP8 GEMMs again, 20 back to
// back with 0, 16 or 24 SMs carved out, alone or with 256 MiB copies running beside them on
// another stream (a communication kernel's stand-in on the SMs the GEMM leaves).
struct Beside {
  std::string shape;
  double m = 0, k = 0, n = 0, carveout = 0, seconds = 0, copy_gb_per_s = 0;
  bool copy = false;
};

std::vector<Beside> read_beside() {
  std::vector<Beside> out;
  for (const testing::CsvRow& row : testing::read_csv_rows(
           std::string(RACKSIM_SOURCE_DIR) + "/data/measured/h200-kernels/beside/beside.csv")) {
    const bool copy = row.at("beside_copy") == "1";
    out.push_back({row.at("shape"), testing::cell_number(row, "m"), testing::cell_number(row, "k"),
                   testing::cell_number(row, "n"), testing::cell_number(row, "carveout_sms"),
                   testing::cell_number(row, "gemm_ms") / 1e3,
                   copy ? testing::cell_number(row, "copy_gb_per_s") : 0, copy});
  }
  return out;
}

TEST(H200SmShare, TheModelsReservedSmsSitBetweenIdleSmsAndACopyBeside) {
  // With 16 SMs carved out: left idle, the GEMMs take 1.03-1.08 x their full-GPU time; with
  // copies moving 1.1-1.9 TB/s beside them, 1.17-1.35 x. racksim's tile model over the 116 SMs
  // left (1.11-1.20 x) lies between the two for every shape. The extra slowdown grows with the
  // bytes the copies move, about 0.13 per TB/s; a TP reduce-scatter over NVLink moves a
  // fraction of what these copies did, which puts it near the model.
  const std::vector<Beside> rows = read_beside();
  auto time_of = [&](const std::string& shape, double carveout, bool copy) {
    for (const Beside& r : rows) {
      if (r.shape == shape && r.carveout == carveout && r.copy == copy) return r;
    }
    ADD_FAILURE() << shape;
    return Beside{};
  };
  int shapes = 0;
  double per_tb_s = 0;
  for (const Beside& r : rows) {
    if (r.carveout != 0 || r.copy) continue;
    ++shapes;
    const double idle = time_of(r.shape, 16, false).seconds / r.seconds;
    const Beside with_copy = time_of(r.shape, 16, true);
    const double beside = with_copy.seconds / r.seconds;
    const double model = modelled_slowdown({r.shape, "fp8", r.m, r.k, r.n, 16, 0});
    EXPECT_LT(idle, model) << r.shape;
    EXPECT_GT(beside, model) << r.shape;
    EXPECT_GT(with_copy.copy_gb_per_s, 1000) << r.shape;
    per_tb_s += (beside - idle) / (with_copy.copy_gb_per_s / 1e3);
  }
  EXPECT_EQ(shapes, 6);
  EXPECT_NEAR(per_tb_s / shapes, 0.133, 0.01);
}

TEST(H200SmShare, CublasWithoutLtIgnoresTheCarveOut) {
  // torch.matmul's BF16 GEMMs go through plain cuBLAS: the knob leaves them on every SM.
  const std::vector<Carved> rows = read_carved();
  for (const Carved& r : rows) {
    if (r.dtype == "bf16") {
      EXPECT_NEAR(r.seconds / full_gpu_s(rows, r), 1.0, 0.025) << r.shape;
    }
  }
}

TEST(H200SmShare, PrintsTheTable) {
  const std::vector<Carved> rows = read_carved();
  std::string table;
  for (const Carved& r : rows) {
    if (r.dtype != "fp8") continue;
    table += fmt::format("{} carve {}: measured x{:.3f}, model x{:.3f}\n", r.shape, r.carveout,
                         r.seconds / full_gpu_s(rows, r), modelled_slowdown(r));
  }
  std::cout << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 36);  // 6 shapes x 6 carve-outs
}

}  // namespace
}  // namespace racksim::sim
