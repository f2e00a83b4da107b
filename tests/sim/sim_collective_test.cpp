// Collectives on an idle network must agree with their closed forms (alpha-beta model):
//   ring all-reduce of S bytes over n GPUs:           2(n-1) (a + S / (n B))
//   ring all-gather / reduce-scatter (S = the buffer):  (n-1) (a + S / (n B))
//   all-to-all (every GPU sends S/n to each other):    a + (n-1) S / (n B)   (one shared port)
// with a the per-step latency of a GPU -> switch -> GPU hop and B the port bandwidth.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "sim/compute_model.h"
#include "sim/engine.h"
#include "topologies/hardware_presets.h"
#include "topologies/topology_graph.h"
#include "workloads/collectives/collective_sweep.h"

namespace racksim {
namespace {

struct Case {
  CollectiveKind kind;
  uint32_t ranks;
  double bytes;
};

std::ostream& operator<<(std::ostream& os, const Case& c) {
  return os << to_string(c.kind) << "_" << c.ranks << "_" << c.bytes;
}

config::Hardware one_h100_node(double base_latency_s) {
  config::Hardware hw = *topo::hardware_preset("dgx-h100");
  hw.set_nodes(1);
  hw.mutable_collectives()->set_base_latency_s(base_latency_s);
  return hw;
}

// Time from the last rank's arrival to the last rank's completion of the single collective.
double simulate_one(const Case& c, const config::Hardware& hw,
                    config::Simulation::Fidelity fidelity = config::Simulation::FULL) {
  const EventGraph graph = collective_sweep_graph(c.kind, c.ranks, {c.bytes});
  const topo::Topology topology = topo::build_cluster(hw);
  std::vector<uint32_t> gpus(c.ranks);
  std::iota(gpus.begin(), gpus.end(), 0u);
  sim::SimOptions options;
  options.collective_base_latency_s = hw.collectives().base_latency_s();
  options.fidelity = fidelity;
  // The closed forms are the ring's: DGX H100 would otherwise run NVLS (tested elsewhere).
  options.algorithm = sim::Algorithm::kRing;
  const auto result =
      sim::simulate(graph, topology, gpus, sim::ComputeModel::from_hardware(hw), options);
  double start = 0, end = 0;
  for (const auto& t : result.timing) {
    start = std::max(start, t.start_s);
    end = std::max(end, t.end_s);
  }
  return end - start;
}

double closed_form(const Case& c, double a, double bw) {
  const double n = c.ranks;
  switch (c.kind) {
    case CollectiveKind::kAllReduce:
      return 2 * (n - 1) * (a + c.bytes / (n * bw));
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return (n - 1) * (a + c.bytes / (n * bw));
    case CollectiveKind::kAllToAll:
      return a + (n - 1) * c.bytes / (n * bw);
    default:
      return 0;
  }
}

class ClosedForm : public ::testing::TestWithParam<Case> {};

TEST_P(ClosedForm, IdleSwitchMatchesAlphaBeta) {
  const Case c = GetParam();
  const config::Hardware hw = one_h100_node(0);
  const double a = hw.scale_up().latency_s();
  const double bw = hw.scale_up().bytes_per_s() * hw.scale_up().efficiency();
  const double expected = closed_form(c, a, bw);
  const double simulated = simulate_one(c, hw);
  EXPECT_NEAR(simulated, expected, 0.01 * expected)
      << "simulated " << simulated * 1e6 << " us, closed form " << expected * 1e6 << " us";
}

// ANALYTIC fidelity times a collective from its plan without flows (per phase: slowest route
// latency + busiest link's bytes / bandwidth): on an idle switch, the closed form too.
TEST_P(ClosedForm, AnalyticFidelityMatchesAlphaBeta) {
  const Case c = GetParam();
  const config::Hardware hw = one_h100_node(0);
  const double a = hw.scale_up().latency_s();
  const double bw = hw.scale_up().bytes_per_s() * hw.scale_up().efficiency();
  const double expected = closed_form(c, a, bw);
  const double analytic = simulate_one(c, hw, config::Simulation::ANALYTIC);
  EXPECT_NEAR(analytic, expected, 0.01 * expected)
      << "analytic " << analytic * 1e6 << " us, closed form " << expected * 1e6 << " us";
}

INSTANTIATE_TEST_SUITE_P(
    Rings, ClosedForm,
    ::testing::Values(Case{CollectiveKind::kAllReduce, 8, 64.0 * (1 << 20)},
                      Case{CollectiveKind::kAllReduce, 4, 256.0 * (1 << 20)},
                      Case{CollectiveKind::kAllReduce, 2, 1 << 20},
                      Case{CollectiveKind::kAllReduce, 8, 4096},  // latency-bound
                      Case{CollectiveKind::kAllGather, 8, 64.0 * (1 << 20)},
                      Case{CollectiveKind::kReduceScatter, 8, 64.0 * (1 << 20)},
                      Case{CollectiveKind::kAllToAll, 8, 64.0 * (1 << 20)}),
    [](const auto& info) {
      std::ostringstream os;
      os << info.param;
      std::string name = os.str();
      std::replace_if(
          name.begin(), name.end(), [](char ch) { return !std::isalnum(ch); }, '_');
      return name;
    });

TEST(CollectiveLatency, BaseLatencyIsAddedOncePerCall) {
  const Case c{CollectiveKind::kAllReduce, 8, 64.0 * (1 << 20)};
  const config::Hardware hw = one_h100_node(10e-6);
  const double a = hw.scale_up().latency_s();
  const double bw = hw.scale_up().bytes_per_s() * hw.scale_up().efficiency();
  const double expected = 10e-6 + closed_form(c, a, bw);
  EXPECT_NEAR(simulate_one(c, hw), expected, 0.01 * expected);
}

TEST(CollectiveFidelity, AggregatedFlowsKeepTheClosedFormOnAnIdleSwitch) {
  // One flow per (rank, peer) carrying all ring steps, the steps' latencies added back.
  const Case c{CollectiveKind::kAllReduce, 8, 64.0 * (1 << 20)};
  const config::Hardware hw = one_h100_node(6e-6);
  const double a = hw.scale_up().latency_s();
  const double bw = hw.scale_up().bytes_per_s() * hw.scale_up().efficiency();
  const double expected = 6e-6 + closed_form(c, a, bw);
  EXPECT_NEAR(simulate_one(c, hw, config::Simulation::AGGREGATED), expected, 0.01 * expected);
}

}  // namespace
}  // namespace racksim
