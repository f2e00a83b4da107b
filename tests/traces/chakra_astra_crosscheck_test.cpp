// The ASTRA-sim cross-check: ASTRA-sim's regression case (8 NPUs on a ring of 50 GB/s links
// with 500 ns latency, one 1 MiB all-reduce per rank, ring algorithm, 4 chunks, the
// congestion-aware analytical network) finishes at 117,780 ns. racksim replays the same trace
// on the same ring; its figure is pinned here against racksim's own closed form,
//   base latency + 2(n-1) x (a + S / (n B)),
// one ring step per phase, each a flow of S/n bytes after the link latency a. README.md
// ("Cross-check against ASTRA-sim") explains the difference.
#include <gtest/gtest.h>

#include "app/trace_replay.h"

namespace racksim {
namespace {

constexpr double kAstraSimFinish_s = 117780e-9;
constexpr double kBytes = 1048576;  // 1 MiB
constexpr int kRanks = 8;
constexpr double kLatency_s = 500e-9;

app::TraceReplayRequest ring_request(double link_bytes_per_s, double base_latency_s) {
  app::TraceReplayRequest r;
  r.trace = std::string(RACKSIM_SOURCE_DIR) +
            "/tests/data/chakra/astra-sim_microbench/all_reduce/8npus_1MB/all_reduce";
  r.topology = app::TraceTopology::kRing;
  r.ring_link_bytes_per_s = link_bytes_per_s;
  r.ring_link_latency_s = kLatency_s;
  r.overrides = {"hardware.collectives.base_latency_s=" + std::to_string(base_latency_s)};
  return r;
}

double closed_form(double link_bytes_per_s, double base_latency_s) {
  return base_latency_s + 2 * (kRanks - 1) * (kLatency_s + kBytes / kRanks / link_bytes_per_s);
}

// 50 GB/s as racksim reads it (1e9 bytes): 14 x (500 ns + 2,621.44 ns) = 43,700 ns.
TEST(AstraSimCrossCheck, RingAllReduceAtFiftyGBps) {
  const app::TraceReplay run = app::replay_trace(ring_request(50e9, 0));
  EXPECT_NEAR(run.report.step_time_s, closed_form(50e9, 0), 1e-12);
  EXPECT_NEAR(run.report.step_time_s, 43700.16e-9, 1e-12);
  // ASTRA-sim's figure is 2.7 times racksim's (see README for why).
  EXPECT_NEAR(kAstraSimFinish_s / run.report.step_time_s, 2.695, 0.001);
}

// ASTRA-sim's analytical backend reads "50 GB/s" as 50 x 2^30 bytes/s: 41,180 ns.
TEST(AstraSimCrossCheck, RingAllReduceAtFiftyGiBps) {
  const double gib = 50.0 * 1024 * 1024 * 1024;
  const app::TraceReplay run = app::replay_trace(ring_request(gib, 0));
  EXPECT_NEAR(run.report.step_time_s, closed_form(gib, 0), 1e-12);
  EXPECT_NEAR(run.report.step_time_s, 41179.7e-9, 0.1e-9);
}

// With the call latency racksim adds to every collective (the DGX H100 preset's 6 us).
TEST(AstraSimCrossCheck, CallLatencyAddsOnce) {
  const app::TraceReplay run = app::replay_trace(ring_request(50e9, 6e-6));
  EXPECT_NEAR(run.report.step_time_s, closed_form(50e9, 6e-6), 1e-12);
}

// The same all-reduce written out step by step (MSCCL's ring as 14 sends, 14 recvs and 7
// 7-us reductions per rank, 128 KiB messages): every rank's chain is send, then for each of the
// 7 reduce-scatter steps recv -> reduce -> send, then 7 all-gather recv -> send.
TEST(AstraSimCrossCheck, CustomRingTraceOnTheRing) {
  app::TraceReplayRequest r = ring_request(50e9, 0);
  r.trace = std::string(RACKSIM_SOURCE_DIR) +
            "/tests/data/chakra/astra-sim_custom_ring_allreduce_8npus_1MB/custom_allreduce";
  const app::TraceReplay run = app::replay_trace(r);
  const double step = kLatency_s + 131072 / 50e9;  // one 128 KiB message on one link
  // 14 messages in a chain through the ring plus 7 reductions of 7 us.
  EXPECT_NEAR(run.report.step_time_s, 14 * step + 7 * 7e-6, 1e-9);
}

}  // namespace
}  // namespace racksim
