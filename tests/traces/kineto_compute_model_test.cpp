// `racksim replay --compute model` on a Kineto trace: a kernel launched inside a GEMM operator
// (aten::mm/addmm/bmm/matmul/linear with Input Dims) is timed by racksim's GEMM model for the
// target preset's GPU; every other kernel keeps its recorded duration, and the report counts
// both. The shapes come from the operator's Input Dims (traces/kineto_gemm.h).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "app/trace_replay.h"
#include "sim/compute_model.h"
#include "sim/gemm_model.h"
#include "tests/support/kineto_trace.h"
#include "tests/support/run_racksim.h"
#include "traces/kineto_gemm.h"
#include "traces/kineto_reader.h"

namespace racksim {
namespace {

using testing::KinetoTraceBuilder;
using Dims = std::vector<std::vector<double>>;

nlohmann::json cpu_op(const std::string& name, double ts, double dur, const Dims& dims) {
  return {{"ph", "X"},    {"cat", "cpu_op"},
          {"name", name}, {"pid", 1},
          {"tid", 1},     {"ts", ts},
          {"dur", dur},   {"args", {{"Input Dims", dims}, {"Input type", {"c10::BFloat16"}}}}};
}

// aten::linear -> aten::addmm [bias] [2048,4096] [4096,1024] launches two kernels (a GEMM and a
// split-K reduction); a relu is launched outside any GEMM operator.
std::string gemm_trace() {
  KinetoTraceBuilder b(0, 1);
  b.step(1, 1000, 2000)
      .raw(cpu_op("aten::linear", 1005, 30, {{2048, 4096}, {1024, 4096}, {1024}}))
      .raw(cpu_op("aten::addmm", 1008, 25, {{1024}, {2048, 4096}, {4096, 1024}}))
      .kernel("sm90_xmma_gemm_bf16", 1010, 1050, 500)
      .kernel("splitKreduce_kernel", 1020, 1560, 20)
      .kernel("relu", 1100, 1600, 100);
  return b.text();
}

TEST(KinetoGemmShape, FromInputDims) {
  auto shape = [](const char* op, const Dims& dims) {
    const auto s = kineto::gemm_shape(op, dims);
    return s ? std::vector<float>{s->batch, s->m, s->k, s->n} : std::vector<float>{};
  };
  EXPECT_EQ(shape("aten::mm", {{64, 32}, {32, 16}}), (std::vector<float>{1, 64, 32, 16}));
  EXPECT_EQ(shape("aten::addmm", {{16}, {64, 32}, {32, 16}}), (std::vector<float>{1, 64, 32, 16}));
  EXPECT_EQ(shape("aten::bmm", {{8, 64, 32}, {8, 32, 16}}), (std::vector<float>{8, 64, 32, 16}));
  EXPECT_EQ(shape("aten::baddbmm", {{8, 64, 16}, {8, 64, 32}, {8, 32, 16}}),
            (std::vector<float>{8, 64, 32, 16}));
  // linear: [batch, seq, k] x weight [n, k]: m = batch x seq.
  EXPECT_EQ(shape("aten::linear", {{4, 512, 1024}, {256, 1024}, {256}}),
            (std::vector<float>{1, 2048, 1024, 256}));
  EXPECT_EQ(shape("aten::matmul", {{4, 512, 1024}, {1024, 256}}),
            (std::vector<float>{1, 2048, 1024, 256}));
  EXPECT_EQ(shape("aten::matmul", {{4, 8, 128, 64}, {4, 8, 64, 128}}),
            (std::vector<float>{32, 128, 64, 128}));
  EXPECT_TRUE(shape("aten::mm", {{64, 32}, {31, 16}}).empty());     // inner dimensions differ
  EXPECT_TRUE(shape("aten::matmul", {{64}, {64, 16}}).empty());     // a vector operand
  EXPECT_TRUE(shape("aten::addmm", {{64, 32}, {32, 16}}).empty());  // an input missing
  EXPECT_TRUE(shape("aten::add", {{64, 32}, {64, 32}}).empty());
}

TEST(KinetoGemmShape, ModelTimesGemmKernelsOnly) {
  kineto::KinetoOptions options;
  options.gemm_seconds = [](const KernelShape& s, DataType dtype) {
    EXPECT_EQ(dtype, DataType::kBf16);
    return s.flops() * 1e-15;  // 2 x 2048 x 4096 x 1024 FLOPs: 17.18 us
  };
  const kineto::KinetoTrace t = kineto::read_kineto_bytes(gemm_trace(), options);
  const kineto::GemmTiming& g = t.gemm_timing;
  EXPECT_TRUE(g.model);
  EXPECT_EQ(g.modelled_kernels, 2u);  // the GEMM and its split-K reduction
  EXPECT_DOUBLE_EQ(g.modelled_s, 2.0 * 2048 * 4096 * 1024 * 1e-15);
  EXPECT_NEAR(g.modelled_recorded_s, 520e-6, 1e-12);
  EXPECT_EQ(g.recorded_kernels, 1u);
  EXPECT_NEAR(g.recorded_s, 100e-6, 1e-12);
  EXPECT_EQ(t.programs[0].counts.gemm_kernels, 2u);
}

// Replayed on one DGX H100: the GEMM kernel lasts what sim/gemm_model.h gives its shape on an
// H100 (132 SMs), the reduction nothing, the relu its recorded 100 us.
TEST(KinetoComputeModel, GemmKernelTakesTheGemmModelsTime) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "rank0.json").string();
  std::ofstream(path) << gemm_trace();
  app::TraceReplayRequest request;
  request.trace = path;
  request.traces = {path};
  request.compute = chakra::ComputeSource::kModel;
  const app::TraceReplay run = app::replay_trace(request);
  const config::Hardware hw = app::resolve_hardware("dgx-h100", 1, {});
  const sim::ComputeModel model = sim::ComputeModel::from_hardware(hw);
  ASSERT_EQ(model.sm_count, 132);
  const double expected = sim::gemm_kernel_cost(2048, 4096, 1024, 1, model.sm_count,
                                                model.compute_peak_flops_per_s(DataType::kBf16),
                                                model.gemm_efficiency, model.gemm_k_overhead)
                              .seconds;
  const EventGraph& g = run.trace.graph;
  int seen = 0;
  for (OpId id = 0; id < g.size(); ++id) {
    const std::string& label = g.label(g.op(id).label);
    const double took = run.result.timing[id].end_s - run.result.timing[id].start_s;
    double want = -1;
    if (label == "sm90_xmma_gemm_bf16") want = expected;
    if (label == "splitKreduce_kernel") want = 0;
    if (label == "relu") want = 100e-6;
    if (want < 0) continue;
    EXPECT_NEAR(took, want, 1e-12) << label;
    ++seen;
  }
  EXPECT_EQ(seen, 3);
  ASSERT_TRUE(run.kineto);
  EXPECT_DOUBLE_EQ(run.kineto->gemm_timing.modelled_s, expected);
  const std::string text = analysis::kineto_comparison_text(*run.kineto);
  EXPECT_NE(text.find("--compute model: 2 GEMM kernels timed by the compute model"),
            std::string::npos)
      << text;
  EXPECT_EQ(analysis::kineto_comparison_json(*run.kineto)["compute"]["recorded_kernels"], 1);
}

}  // namespace
}  // namespace racksim
