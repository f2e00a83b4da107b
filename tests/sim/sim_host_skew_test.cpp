// hardware.collectives.host_skew_s: a collective that follows a host-bound kernel waits for the
// last of its n members' hosts, sigma * E[max of n standard normals] on average
// (sim/host_skew.h); after a GPU-bound kernel the GPU's lag hides the hosts' jitter.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/compute_model.h"
#include "sim/engine.h"
#include "sim/host_skew.h"
#include "topologies/hardware_presets.h"
#include "topologies/topology_graph.h"

namespace racksim {
namespace {

TEST(HostSkew, ExpectedMaxOfNormalsMatchesItsClosedForms) {
  EXPECT_EQ(sim::expected_max_of_normals(1), 0);
  // n = 2: 1 / sqrt(pi); n = 3: 3 / (2 sqrt(pi)); n = 4, 8, 10 and 100 from tables of
  // normal order statistics (Tippett, 1925; Harter, 1961).
  EXPECT_NEAR(sim::expected_max_of_normals(2), 1 / std::sqrt(M_PI), 1e-9);
  EXPECT_NEAR(sim::expected_max_of_normals(3), 1.5 / std::sqrt(M_PI), 1e-9);
  EXPECT_NEAR(sim::expected_max_of_normals(4), 1.029375, 1e-6);
  EXPECT_NEAR(sim::expected_max_of_normals(8), 1.423600, 1e-6);
  EXPECT_NEAR(sim::expected_max_of_normals(10), 1.538753, 1e-6);
  EXPECT_NEAR(sim::expected_max_of_normals(100), 2.507594, 1e-6);
  EXPECT_EQ(sim::collective_host_skew_s(0, 8), 0);
  EXPECT_NEAR(sim::collective_host_skew_s(10e-6, 2), 10e-6 / std::sqrt(M_PI), 1e-15);
}

constexpr double kFloorS = 40e-6;
constexpr double kSkewS = 25e-6;
constexpr double kBytesPerS = 1e12;  // a kernel moving B bytes lasts B / 1e12 s

TEST(HostSkew, OnlyACollectiveAfterAHostBoundKernelWaitsForTheLastHost) {
  config::Hardware hw = *topo::hardware_preset("dgx-h100");
  hw.set_nodes(1);
  EventGraph graph(8);
  const StreamId compute = graph.add_stream("compute", StreamKind::kCompute);
  const StreamId comm = graph.add_stream("comm", StreamKind::kComm);
  // Ranks 0-3 run a 1 us kernel (under the 40 us floor: host-bound) before their all-reduce;
  // ranks 4-7 a 2 ms one (GPU-bound), so the two all-reduces never overlap.
  const CommId host_bound = graph.add_communicator({0, 1, 2, 3});
  const CommId gpu_bound = graph.add_communicator({4, 5, 6, 7});
  std::vector<OpId> reduce(8);
  for (RankId r = 0; r < 8; ++r) {
    const double seconds = r < 4 ? 1e-6 : 2e-3;
    const OpId k = graph.add_compute({r, compute, Phase::kForward}, "k", OpClass::kElementwise, 0,
                                     seconds * kBytesPerS, DataType::kBf16);
    const OpId deps[] = {k};
    reduce[r] = graph.add_collective({r, comm, Phase::kForward}, "ar", CollectiveKind::kAllReduce,
                                     r < 4 ? host_bound : gpu_bound, 64e6, CommDim::kTp, deps);
  }
  sim::ComputeModel model = sim::ComputeModel::from_hardware(hw);
  model.kernel_model = true;
  model.hbm_bytes_per_s = kBytesPerS;
  model.hbm_efficiency = 1;
  model.cpu_launch_floor_s = kFloorS;
  sim::SimOptions options;
  options.algorithm = sim::Algorithm::kRing;
  options.collective_host_skew_s = kSkewS;
  const sim::SimResult result =
      sim::simulate(graph, topo::build_cluster(hw), {0, 1, 2, 3, 4, 5, 6, 7}, model, options);

  auto lasts = [&](RankId r) {
    return result.timing[reduce[r]].end_s - result.timing[reduce[r]].start_s;
  };
  EXPECT_NEAR(result.timing[reduce[0]].start_s, kFloorS, 1e-12);
  EXPECT_NEAR(lasts(0) - lasts(4), kSkewS * sim::expected_max_of_normals(4), 1e-9);
  EXPECT_GT(lasts(4), 0);
}

}  // namespace
}  // namespace racksim
