// Two compute streams of one GPU share it (DualPipe's overlapped passes, a trace's CUDA streams):
// kernels running together each advance at half the rate, and every kernel of a run is slowed
// alike, not the last one alone. One simulation per TEST (process).
#include <gtest/gtest.h>

#include <vector>

#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/hardware_presets.h"
#include "topologies/topology_graph.h"

namespace racksim {
namespace {

// Stream A runs kernels of 1 and 3 ms back to back; stream B one of 4 ms at the same time. Both
// run at half speed, so both streams end at 8 ms, and A's kernels take 2 and 6 ms.
TEST(SharedGpu, EveryKernelOfARunTakesItsShareOfTheSlowdown) {
  EventGraph graph(1);
  const StreamId a = graph.add_stream("compute", StreamKind::kCompute);
  const StreamId b = graph.add_stream("compute.overlap", StreamKind::kCompute);
  const OpId a1 = graph.add_recorded_compute({0, a, Phase::kForward}, "a1", 1e-3, 0, 0);
  const OpId a2 = graph.add_recorded_compute({0, a, Phase::kForward}, "a2", 3e-3, 0, 0);
  const OpId b1 = graph.add_recorded_compute({0, b, Phase::kBackward}, "b1", 4e-3, 0, 0);

  config::Hardware hw = *topo::hardware_preset("dgx-h100");
  hw.set_nodes(1);
  const topo::Topology topology = topo::build_cluster(hw);
  const sim::SimResult result =
      sim::simulate(graph, topology, {0}, sim::ComputeModel::from_hardware(hw), {});

  EXPECT_NEAR(result.timing[a1].start_s, 0, 1e-12);
  EXPECT_NEAR(result.timing[a1].end_s, 2e-3, 1e-9);
  EXPECT_NEAR(result.timing[a2].start_s, 2e-3, 1e-9);
  EXPECT_NEAR(result.timing[a2].end_s, 8e-3, 1e-9);
  EXPECT_NEAR(result.timing[b1].end_s, 8e-3, 1e-9);
}

}  // namespace
}  // namespace racksim
