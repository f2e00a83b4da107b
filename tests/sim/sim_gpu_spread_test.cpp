// The spread of identical GPUs' speeds (faults.gpu_spread, topologies/faults.h): each GPU's
// factor is 1 + sd x z with z a standard normal of the seed and the GPU alone, the slowest of n
// GPUs sits E[max of n standard normals] deviations above the median on average, and a
// data-parallel step waits for its slowest GPU. One simulation per TEST (process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/compute_model.h"
#include "sim/engine.h"
#include "sim/host_skew.h"
#include "topologies/faults.h"
#include "topologies/hardware_presets.h"
#include "topologies/topology_graph.h"

namespace racksim {
namespace {

// 20,000 GPUs of one seed: mean 0 and variance 1 within a few standard errors (0.007 and 0.01),
// the same factor for a GPU in a cluster of any size, another factor under another seed.
TEST(GpuSpread, DrawsAreStandardNormalsOfTheSeedAndTheGpuAlone) {
  const topo::GpuSpread spread{0.05, 3};
  constexpr int kGpus = 20000;
  double sum = 0, squares = 0;
  for (uint32_t g = 0; g < kGpus; ++g) {
    const double z = (spread.factor(g) - 1) / spread.relative_sd;
    sum += z;
    squares += z * z;
  }
  const double mean = sum / kGpus;
  EXPECT_NEAR(mean, 0, 0.03);
  EXPECT_NEAR(squares / kGpus - mean * mean, 1, 0.05);

  topo::Faults faults;
  faults.spread = spread;
  EXPECT_DOUBLE_EQ(faults.gpu_time_factors(8)[5], faults.gpu_time_factors(4096)[5]);
  EXPECT_DOUBLE_EQ(faults.gpu_time_factors(8)[5], spread.factor(5));
  EXPECT_NE(spread.factor(0), (topo::GpuSpread{0.05, 4}.factor(0)));
  EXPECT_DOUBLE_EQ((topo::GpuSpread{0, 3}.factor(7)), 1);
}

// Over 4,000 seeds, the slowest of n GPUs averages E[max of n standard normals] deviations above
// the median (1.4236 for 8, 2.3437 for 64; sim/host_skew.h integrates it), within four standard
// errors (about 0.01 for 8 GPUs).
TEST(GpuSpread, TheSlowestOfNGpusIsTheExpectedMaxOfNNormals) {
  constexpr int kSeeds = 4000;
  for (const uint32_t n : {2u, 8u, 64u}) {
    double sum = 0;
    for (uint64_t seed = 0; seed < kSeeds; ++seed) {
      const topo::GpuSpread spread{0.01, seed};
      double slowest = 0;
      for (uint32_t g = 0; g < n; ++g) slowest = std::max(slowest, spread.factor(g));
      sum += (slowest - 1) / spread.relative_sd;
    }
    EXPECT_NEAR(sum / kSeeds, sim::expected_max_of_normals(static_cast<int>(n)), 0.04) << n;
  }
}

// Two GPUs of one DGX H100, each a kernel of d then a ring all-reduce (2a + S / port on an idle
// NVLink): both kernels end at d x their factor, and the all-reduce starts when the slower has
// ended, so the step is d x the larger factor + 2a + S / port.
TEST(GpuSpread, ADataParallelStepWaitsForItsSlowestGpu) {
  config::Hardware hw = *topo::hardware_preset("dgx-h100");
  hw.set_nodes(1);
  hw.mutable_collectives()->set_base_latency_s(0);
  hw.mutable_collectives()->set_algorithm(config::CollectiveTuning::RING);
  constexpr double d = 0.01, kBytes = 256.0 * (1 << 20);
  EventGraph graph(2);
  const StreamId compute = graph.add_stream("compute", StreamKind::kCompute);
  const CommId comm = graph.add_communicator({0, 1});
  std::vector<OpId> kernels;
  for (RankId r = 0; r < 2; ++r) {
    kernels.push_back(graph.add_recorded_compute({r, compute}, "backward", d, 0, 0));
    graph.add_collective({r, compute}, "grad all_reduce", CollectiveKind::kAllReduce, comm, kBytes,
                         CommDim::kDp, std::vector<OpId>{kernels.back()});
  }
  topo::Faults faults;
  faults.spread = topo::GpuSpread{0.05, 1};
  const std::vector<double> factors = faults.gpu_time_factors(2);
  ASSERT_NE(factors[0], factors[1]);
  sim::SimOptions options = sim::sim_options(hw, {});
  options.gpu_time_factor = factors;
  const auto result = sim::simulate(graph, topo::build_cluster(hw, faults), {0, 1},
                                    sim::ComputeModel::from_hardware(hw), options);
  EXPECT_NEAR(result.timing[kernels[0]].end_s, factors[0] * d, 1e-12);
  EXPECT_NEAR(result.timing[kernels[1]].end_s, factors[1] * d, 1e-12);
  const double port = 450e9 * hw.scale_up().efficiency();
  const double all_reduce_s = 2 * hw.scale_up().latency_s() + kBytes / port;
  double step_s = 0;
  for (const auto& t : result.timing) step_s = std::max(step_s, t.end_s);
  EXPECT_NEAR(step_s, std::max(factors[0], factors[1]) * d + all_reduce_s, 0.01 * all_reduce_s);
}

}  // namespace
}  // namespace racksim
