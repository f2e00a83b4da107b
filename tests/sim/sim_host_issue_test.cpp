// hardware.compute.host_issue: the host's time per kernel (cpu_launch_floor_s) either floors each
// kernel (PER_KERNEL) or runs ahead of the GPU as CUDA's launch queue lets it (AHEAD). Under AHEAD
// kernel i starts at max(end of kernel i-1, when the host issued it), the host issuing one kernel
// every floor; the replay must agree with that recurrence.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/hardware_presets.h"
#include "topologies/topology_graph.h"

namespace racksim {
namespace {

constexpr double kFloorS = 40e-6;
constexpr double kBytesPerS = 1e12;  // a kernel moving B bytes lasts B / 1e12 s

std::vector<double> alternating_kernels() {
  std::vector<double> seconds;
  for (int i = 0; i < 6; ++i) seconds.insert(seconds.end(), {100e-6, 10e-6, 5e-6});
  for (int i = 0; i < 8; ++i) seconds.push_back(10e-6);  // a host-bound tail
  return seconds;
}

struct HostIssueCase {
  config::Hardware hw = *topo::hardware_preset("dgx-h100");
  EventGraph graph{1};

  HostIssueCase() { hw.set_nodes(1); }

  sim::ComputeModel model(bool ahead) const {
    sim::ComputeModel m = sim::ComputeModel::from_hardware(hw);
    m.kernel_model = true;
    m.hbm_bytes_per_s = kBytesPerS;
    m.hbm_efficiency = 1;
    m.launch_overhead_s = 0;
    m.cpu_launch_floor_s = kFloorS;
    m.host_runs_ahead = ahead;
    return m;
  }
  // A memory-bound kernel of `seconds` on `stream`.
  OpId kernel(StreamId stream, double seconds, Phase phase = Phase::kForward,
              std::vector<OpId> deps = {}) {
    return graph.add_compute({0, stream, phase}, "k", OpClass::kElementwise, 0,
                             seconds * kBytesPerS, DataType::kBf16, deps);
  }
  // The alternating kernels on `stream`, in order.
  std::vector<OpId> alternating(StreamId stream) {
    std::vector<OpId> ops;
    for (double seconds : alternating_kernels()) ops.push_back(kernel(stream, seconds));
    return ops;
  }
  sim::SimResult run(bool ahead) const {
    return sim::simulate(graph, topo::build_cluster(hw), {0}, model(ahead), {});
  }
};

// When the last kernel ends, from the queue's recurrence: the host issues kernel i at
// (i + 1) x floor; it starts when that is done and the kernel before it has ended.
double queued_end_s(const std::vector<double>& kernels_s) {
  double end = 0;
  for (size_t i = 0; i < kernels_s.size(); ++i) {
    end = std::max(end, static_cast<double>(i + 1) * kFloorS) + kernels_s[i];
  }
  return end;
}

TEST(HostIssue, AheadTheShortKernelsUseTheTimeTheLongOnesLeftTheHost) {
  HostIssueCase c;
  const std::vector<OpId> ops = c.alternating(c.graph.add_stream("compute", StreamKind::kCompute));

  const sim::SimResult ahead = c.run(true);
  EXPECT_NEAR(ahead.timing[ops.back()].end_s, queued_end_s(alternating_kernels()), 1e-9);
}

TEST(HostIssue, PerKernelEachKernelLastsAtLeastTheFloor) {
  HostIssueCase c;
  const std::vector<OpId> ops = c.alternating(c.graph.add_stream("compute", StreamKind::kCompute));

  const sim::SimResult floored = c.run(false);
  // 6 x (100 + 40 + 40) + 8 x 40 us, each kernel floored on its own: more than the queue.
  const double floored_s = 6 * 180e-6 + 8 * 40e-6;
  EXPECT_NEAR(floored.timing[ops.back()].end_s, floored_s, 1e-9);
  EXPECT_LT(queued_end_s(alternating_kernels()), floored_s - 100e-6);
}

// With a second compute stream the rank's kernels run as SimGrid activities in runs; a kernel the
// host has not issued when the run reaches it must still wait for its issue.
TEST(HostIssue, AheadRunsOfKernelsOnASharedGpuWaitForTheirIssue) {
  HostIssueCase c;
  const StreamId s = c.graph.add_stream("compute", StreamKind::kCompute);
  const StreamId other = c.graph.add_stream("compute.overlap", StreamKind::kCompute);
  const std::vector<OpId> ops = c.alternating(s);
  const OpId after = c.kernel(other, 1e-6, Phase::kForward, {ops.back()});

  const sim::SimResult ahead = c.run(true);
  const double end = queued_end_s(alternating_kernels());
  EXPECT_NEAR(ahead.timing[ops.back()].end_s, end, 1e-9);
  // One host issues the rank's kernels on both streams: the other stream's kernel is its 27th.
  const double issued = static_cast<double>(alternating_kernels().size() + 1) * kFloorS;
  EXPECT_NEAR(ahead.timing[after].start_s, std::max(end, issued), 1e-9);
}

// The host reads the gradient norm before it issues the optimizer: its first kernel is issued a
// floor after the backward has ended, not in the time the backward left the host.
TEST(HostIssue, AheadTheHostWaitsForTheGpuBeforeTheOptimizer) {
  HostIssueCase c;
  const StreamId s = c.graph.add_stream("compute", StreamKind::kCompute);
  const OpId backward = c.kernel(s, 1e-3, Phase::kBackward);
  const OpId optimizer = c.kernel(s, 10e-6, Phase::kOptimizer, {backward});

  const sim::SimResult ahead = c.run(true);
  EXPECT_NEAR(ahead.timing[backward].end_s, kFloorS + 1e-3, 1e-9);
  EXPECT_NEAR(ahead.timing[optimizer].start_s, 2 * kFloorS + 1e-3, 1e-9);
  EXPECT_NEAR(ahead.timing[optimizer].end_s, 2 * kFloorS + 1e-3 + 10e-6, 1e-9);
}

TEST(HostIssue, TheScenarioFieldSelectsTheQueue) {
  config::Hardware hw = *topo::hardware_preset("dgx-a100");
  EXPECT_FALSE(sim::ComputeModel::from_hardware(hw).host_runs_ahead);  // PER_KERNEL by default
  hw.mutable_compute()->set_host_issue(config::ComputeEfficiency::AHEAD);
  EXPECT_TRUE(sim::ComputeModel::from_hardware(hw).host_runs_ahead);
  hw.mutable_compute()->set_host_issue(config::ComputeEfficiency::PER_KERNEL);
  EXPECT_FALSE(sim::ComputeModel::from_hardware(hw).host_runs_ahead);
}

}  // namespace
}  // namespace racksim
