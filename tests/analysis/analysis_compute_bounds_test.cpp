// The split of a rank's kernel time by what sets each kernel: every compute operation of the rank
// counted once, under its bound, for the duration the compute model gives it; other ranks' and
// communication operations not at all.
#include <gtest/gtest.h>

#include "analysis/compute_bounds.h"
#include "analysis/report.h"
#include "tests/support/compute_ops.h"

namespace racksim {
namespace {

using sim::KernelBound;

sim::ComputeModel a100_with_ceiling() {
  sim::ComputeModel m = testing::kernel_a100_model(0.96);
  m.gemm_sustained = 0.74;
  return m;
}

TEST(ComputeBounds, EachKernelOfTheRankCountsOnceUnderItsBound) {
  EventGraph graph(2);
  const StreamId compute = graph.add_stream("compute", StreamKind::kCompute);
  const StreamId comm = graph.add_stream("comm.dp", StreamKind::kComm);
  const OpContext rank0{0, compute, Phase::kForward, 0, 0};
  const KernelShape large{8192, 8192, 8192, 1, GemmPass::kForward};
  const double gemm_flops = 2.0 * 8192 * 8192 * 8192;
  const OpId gemm = graph.add_compute(rank0, "mlp", OpClass::kGemm, gemm_flops,
                                      3 * 8192.0 * 8192 * 2, DataType::kBf16, {}, large);
  const OpId norm =
      graph.add_compute(rank0, "norm", OpClass::kElementwise, 1e6, 4e8, DataType::kBf16);
  graph.add_recorded_compute(rank0, "fixed", 0.25, 0, 0);
  const CommId dp = graph.add_communicator({0, 1});
  graph.add_collective({0, comm, Phase::kBackward, 0, 0}, "grads", CollectiveKind::kAllReduce, dp,
                       1e9, CommDim::kDp);
  graph.add_compute({1, compute, Phase::kForward, 0, 0}, "mlp", OpClass::kGemm, gemm_flops,
                    3 * 8192.0 * 8192 * 2, DataType::kBf16, {}, large);

  const sim::ComputeModel model = a100_with_ceiling();
  const analysis::ComputeBounds bounds = analysis::compute_bounds(graph, 0, model);
  const double gemm_s = model.duration_s(graph.op(gemm), large);
  const double norm_s = model.duration_s(graph.op(norm));
  EXPECT_NEAR(gemm_s, gemm_flops / (312e12 * 0.74), 1e-12);  // the ceiling, not the tiles
  auto seconds = [&](KernelBound b) { return bounds.seconds[static_cast<size_t>(b)]; };
  EXPECT_DOUBLE_EQ(seconds(KernelBound::kGemmSustained), gemm_s);
  EXPECT_DOUBLE_EQ(seconds(KernelBound::kMemory), norm_s);
  EXPECT_DOUBLE_EQ(seconds(KernelBound::kGiven), 0.25);
  EXPECT_DOUBLE_EQ(bounds.total_s(), gemm_s + norm_s + 0.25);
  EXPECT_DOUBLE_EQ(bounds.share(KernelBound::kGiven), 0.25 / bounds.total_s());
  EXPECT_EQ(seconds(KernelBound::kGemmTiles), 0);
  EXPECT_EQ(sim::json_key(KernelBound::kGemmSustained), "gemm_sustained");
  EXPECT_EQ(sim::json_key(KernelBound::kHost), "host_bound");
}

// The report says at what clock the FLOP-bound kernels ran when it is not the one their rates were
// measured at (hardware.compute.sustained_clock_ratio), in the text and in report.json, and says
// nothing of it otherwise.
TEST(ComputeBounds, TheReportNamesASustainedClockOnlyWhereOneIsSet) {
  EventGraph graph(1);
  const StreamId compute = graph.add_stream("compute", StreamKind::kCompute);
  graph.add_compute({0, compute, Phase::kForward, 0, 0}, "norm", OpClass::kElementwise, 1e6, 4e8,
                    DataType::kBf16);
  sim::ComputeModel model = testing::kernel_a100_model(0.9);
  analysis::StepReport report;
  report.kernel_bounds = analysis::compute_bounds(graph, 0, model);
  EXPECT_EQ(report.kernel_bounds.sustained_clock_ratio, 1);
  // (The validation line names every configuration's ratio; the kernel line names the field.)
  EXPECT_EQ(analysis::report_text(report).find("hardware.compute.sustained_clock_ratio"),
            std::string::npos);
  EXPECT_FALSE(
      analysis::report_json(report)["kernel_time_by_bound"].contains("sustained_clock_ratio"));
  model.sustained_clock_ratio = 0.795;
  report.kernel_bounds = analysis::compute_bounds(graph, 0, model);
  EXPECT_NE(analysis::report_text(report).find("at 0.795 of the rate"), std::string::npos);
  EXPECT_EQ(analysis::report_json(report)["kernel_time_by_bound"]["sustained_clock_ratio"], 0.795);
}

}  // namespace
}  // namespace racksim
