// A simulation result survives the trip from a child process to its parent unchanged, and a
// truncated or foreign file is refused rather than read as garbage.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "sim/sim_result_io.h"

namespace racksim::sim {
namespace {

SimResult sample() {
  SimResult r;
  r.timing = {{0, 1.5}, {1.5, 2.25}, {-1, -1}};
  r.released_by = {kNoOp, 0, 1};
  r.makespan_s = 2.25;
  r.activities = 7;
  r.flows = 3;
  r.wall_s = 0.01;
  r.fidelity = config::Simulation::AUTO;
  r.simulated_ranks = 2;
  r.analytic_collectives = 4;
  r.flow_collectives = 1;
  r.routes_computed = 2;
  r.gpu_pairs = 2;
  r.traffic.push_back({0, 1, 1e6, 2, {{0.1, 0.2}, {0.5, 0.75}}});
  r.traffic.push_back({1, 0, 5e5, 1, {{0.3, 0.4}}});
  r.traffic_resolution_s = 1e-9;
  r.algorithms.push_back({CollectiveKind::kAllToAll, CommDim::kEp, Algorithm::kRing, 5, 8});
  return r;
}

TEST(SimResultIo, RoundTripsEveryField) {
  const SimResult in = sample();
  std::stringstream bytes;
  write_sim_result(in, bytes);
  const SimResult out = read_sim_result(bytes);
  ASSERT_EQ(out.timing.size(), 3u);
  EXPECT_EQ(out.timing[1].start_s, 1.5);
  EXPECT_EQ(out.timing[2].end_s, -1);
  EXPECT_EQ(out.released_by, in.released_by);
  EXPECT_EQ(out.makespan_s, 2.25);
  EXPECT_EQ(out.activities, 7u);
  EXPECT_EQ(out.flows, 3u);
  EXPECT_EQ(out.fidelity, config::Simulation::AUTO);
  EXPECT_EQ(out.simulated_ranks, 2u);
  EXPECT_EQ(out.analytic_collectives, 4u);
  EXPECT_EQ(out.flow_collectives, 1u);
  ASSERT_EQ(out.traffic.size(), 2u);
  EXPECT_EQ(out.traffic[0].destination, 1u);
  EXPECT_EQ(out.traffic[0].bytes, 1e6);
  ASSERT_EQ(out.traffic[0].busy.size(), 2u);
  EXPECT_EQ(out.traffic[0].busy[1].end_s, 0.75);
  EXPECT_EQ(out.traffic_resolution_s, 1e-9);
  ASSERT_EQ(out.algorithms.size(), 1u);
  EXPECT_EQ(out.algorithms[0].kind, CollectiveKind::kAllToAll);
  EXPECT_EQ(out.algorithms[0].collectives, 5u);
  EXPECT_EQ(out.algorithms[0].max_members, 8u);
}

TEST(SimResultIo, RefusesTruncatedOrForeignBytes) {
  std::stringstream bytes;
  write_sim_result(sample(), bytes);
  const std::string whole = bytes.str();
  std::stringstream cut(whole.substr(0, whole.size() - 9));
  EXPECT_THROW(read_sim_result(cut), std::runtime_error);
  std::stringstream foreign("this is not a simulation result at all");
  EXPECT_THROW(read_sim_result(foreign), std::runtime_error);
}

}  // namespace
}  // namespace racksim::sim
