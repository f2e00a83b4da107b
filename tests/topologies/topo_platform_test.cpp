// The SimGrid platform built from the cluster graph, checked by simulating flows on it.
//
// SimGrid allows one s4u::Engine per process: each TEST creates its own, and ctest runs every
// TEST in its own process (gtest_discover_tests). Running this binary without a filter runs
// them all in one process, which SimGrid does not support.
#include <cmath>
#include <vector>

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>
#include <simgrid/s4u.hpp>

#include "tests/support/test_hardware.h"
#include "topologies/engine_config.h"
#include "topologies/platform.h"

namespace racksim::topo {
namespace {

constexpr double kNvlink = testing::kTestNvlink;
constexpr double kNic = testing::kTestNic;
constexpr double kBytes = 1e9;

config::Hardware hardware(int nodes, int nodes_per_leaf = 32) {
  config::Hardware hw = testing::test_hardware(nodes);
  hw.mutable_scale_out()->set_nodes_per_leaf(nodes_per_leaf);
  return hw;
}

struct Flow {
  uint32_t src_gpu;
  uint32_t dst_gpu;
  double bytes;
  int dst_cpu = -1;  // >= 0: the flow goes to this CPU socket (global NUMA node) instead
};

// Owns the engine of the test's process, configured as the simulator configures it.
class TopoPlatform : public ::testing::Test {
 protected:
  TopoPlatform() : engine_(&argc_, argv_) { configure_engine_for_gpus(); }

  void build(int nodes, int nodes_per_leaf = 32) {
    topology_ = build_cluster(hardware(nodes, nodes_per_leaf));
    platform_ = build_platform(topology_, 1e15);
  }

  // Starts all flows at time 0 and returns the time each one completes.
  std::vector<double> simulate(const std::vector<Flow>& flows) {
    std::vector<double> done(flows.size(), -1);
    for (size_t i = 0; i < flows.size(); ++i) {
      simgrid::s4u::Host* src = platform_->gpu_host(flows[i].src_gpu);
      simgrid::s4u::Host* dst = flows[i].dst_cpu >= 0 ? platform_->cpu_host(flows[i].dst_cpu)
                                                      : platform_->gpu_host(flows[i].dst_gpu);
      simgrid::s4u::Actor::create("flow" + std::to_string(i), src, [&done, i, src, dst, &flows] {
        simgrid::s4u::Comm::sendto_async(src, dst, static_cast<uint64_t>(flows[i].bytes))->wait();
        done[i] = simgrid::s4u::Engine::get_clock();
      });
    }
    engine_.run();
    return done;
  }

  int argc_ = 1;
  char arg0_[8] = "racksim";
  char* argv_[2] = {arg0_, nullptr};
  simgrid::s4u::Engine engine_;
  Topology topology_;
  std::unique_ptr<Platform> platform_;
};

void expect_close(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-9 * expected)
      << "actual " << actual << ", expected " << expected;
}

TEST_F(TopoPlatform, HostsAndLinksMirrorTheGraph) {
  build(2);
  ASSERT_EQ(platform_->num_gpus(), 16u);
  EXPECT_EQ(platform_->gpu_host(9)->get_name(), "n1.gpu1");
  EXPECT_EQ(engine_.get_host_count(), 16u + 4);  // GPUs and CPU sockets
  ASSERT_EQ(platform_->num_cpus(), 4u);
  EXPECT_EQ(platform_->cpu_host(3)->get_name(), "n1.cpu1");
  EXPECT_EQ(platform_->edge_link(0)->get_name(), "n0.gpu0-n0.nvswitch");

  // SimGrid's view of a cross-rail route matches the router's, half-link by half-link.
  const auto& hops = platform_->router().route(topology_.gpus[0], topology_.gpus[9]);
  std::vector<simgrid::s4u::Link*> links;
  double latency = 0;
  platform_->gpu_host(0)->route_to(platform_->gpu_host(9), links, &latency);
  ASSERT_EQ(links.size(), hops.size());
  for (size_t i = 0; i < hops.size(); ++i) EXPECT_EQ(links[i], platform_->link(hops[i]));
  expect_close(latency, platform_->router().latency_s(hops));
  EXPECT_EQ(links.front()->get_name(), "n0.gpu0-n0.pcie0_UP");
  EXPECT_EQ(links.back()->get_name(), "n1.gpu1-n1.pcie0_DOWN");
}

TEST_F(TopoPlatform, OneFlowInANodeTakesLatencyPlusSizeOverNvlink) {
  build(1);
  const auto done = simulate({{0, 1, kBytes}});
  expect_close(done[0], 2e-6 + kBytes / kNvlink);
}

TEST_F(TopoPlatform, TwoFlowsIntoOneGpuShareItsNvlinkDownlink) {
  build(1);
  const auto done = simulate({{0, 2, kBytes}, {1, 2, kBytes}});
  expect_close(done[0], 2e-6 + 2 * kBytes / kNvlink);
  expect_close(done[1], 2e-6 + 2 * kBytes / kNvlink);
}

TEST_F(TopoPlatform, OppositeFlowsDoNotShareSplitDuplexLinks) {
  build(1);
  const auto done = simulate({{0, 1, kBytes}, {1, 0, kBytes}});
  expect_close(done[0], 2e-6 + kBytes / kNvlink);
  expect_close(done[1], 2e-6 + kBytes / kNvlink);
}

TEST_F(TopoPlatform, CrossNodeFlowIsLimitedByTheNic) {
  build(2);
  const auto done = simulate({{3, 11, kBytes}});  // GPU 3 of node 0 -> GPU 3 of node 1
  expect_close(done[0], 2 * 1.5e-6 + 2 * 1e-6 + kBytes / kNic);
}

TEST_F(TopoPlatform, CrossRailFlowRunsAtNicSpeedOnAFullLeaf) {
  build(2);
  const auto done = simulate({{0, 9, kBytes}});  // GPU 0 of node 0 -> GPU 1 of node 1
  expect_close(done[0], 2 * 1.5e-6 + 2 * 1e-6 + 2 * 0.5e-6 + kBytes / kNic);
}

TEST_F(TopoPlatform, CrossRailFlowIsLimitedByAThinLeafUplink) {
  // Leaves with ports for 2 servers spread over 8 spines: each uplink is a quarter of a NIC.
  build(2, /*nodes_per_leaf=*/2);
  const auto done = simulate({{0, 9, kBytes}});
  expect_close(done[0], 2 * 1.5e-6 + 2 * 1e-6 + 2 * 0.5e-6 + kBytes / (2 * kNic / 8));
}

TEST_F(TopoPlatform, CopyToTheOwnSocketCrossesTwoPcieLinks) {
  build(1);
  const auto done = simulate({{1, 0, kBytes, /*dst_cpu=*/0}});
  expect_close(done[0], 2 * 0.75e-6 + kBytes / testing::kTestPcie);
}

TEST_F(TopoPlatform, CopyToTheOtherSocketAlsoCrossesTheInterSocketLink) {
  build(1);
  const auto done = simulate({{1, 0, kBytes, /*dst_cpu=*/1}});
  expect_close(done[0], 0.25e-6 + 2 * 0.75e-6 + kBytes / testing::kTestPcie);
}

TEST_F(TopoPlatform, TwoGpusOfOneSwitchShareItsUplinkForCopies) {
  build(1);
  // GPUs 0 and 1 sit on PCIe switch 0; GPU 2 on switch 1 has its own uplink.
  const auto done = simulate({{0, 0, kBytes, 0}, {1, 0, kBytes, 0}, {2, 0, kBytes, 0}});
  expect_close(done[0], 2 * 0.75e-6 + 2 * kBytes / testing::kTestPcie);
  expect_close(done[1], 2 * 0.75e-6 + 2 * kBytes / testing::kTestPcie);
  expect_close(done[2], 2 * 0.75e-6 + kBytes / testing::kTestPcie);
}

TEST_F(TopoPlatform, CopiesOfBothSocketsToOneSocketShareTheInterSocketLink) {
  build(1);
  // GPUs 4 and 6 (socket 1, different switches) both copy to socket 0: the inter-socket link
  // (85 GB/s) is narrower than two PCIe links.
  const auto done = simulate({{4, 0, kBytes, 0}, {6, 0, kBytes, 0}});
  expect_close(done[0], 0.25e-6 + 2 * 0.75e-6 + 2 * kBytes / testing::kTestInterSocket);
}

TEST_F(TopoPlatform, SendingToItselfCostsAlmostNothing) {
  build(1);
  const auto done = simulate({{3, 3, kBytes}, {3, 3, 0}});
  EXPECT_LT(done[0], 1e-5);
  EXPECT_GE(done[1], 0);
}

TEST_F(TopoPlatform, ComputeRunsAtTheGpuSpeed) {
  build(1);
  simgrid::s4u::Actor::create("compute", platform_->gpu_host(0),
                              [] { simgrid::s4u::this_actor::execute(3e15); });
  engine_.run();
  expect_close(simgrid::s4u::Engine::get_clock(), 3.0);
}

}  // namespace
}  // namespace racksim::topo
