// cuda_sync events (PyTorch's enable_cuda_sync_events): a "Stream Wait Event" names the waiting
// stream, the stream waited on and the cudaEventRecord, so the replay makes exactly the waiting
// stream's next kernel depend on the recorded stream's last kernel before the record, where an
// older trace can only make the thread's next launch wait for every other stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/support/kineto_trace.h"
#include "traces/kineto_reader.h"

namespace racksim {
namespace {

// "producer" on stream 20, then a record (correlation 900) and a wait (901) for stream 8;
// "x" launched next on stream 7, "y" on stream 8.
std::string trace(bool with_sync_event) {
  testing::KinetoTraceBuilder b(0, 1);
  b.step(1, 1000, 2000)
      .kernel("producer", 1005, 1010, 500, 20)
      .runtime_call("cudaEventRecord", 1015, 900)
      .runtime_call("cudaStreamWaitEvent", 1020, 901)
      .kernel("x", 1030, 1040, 10, 7)
      .kernel("y", 1050, 1520, 10, 8);
  if (with_sync_event) {
    b.raw({{"ph", "X"},
           {"cat", "cuda_sync"},
           {"name", "Stream Wait Event"},
           {"pid", 0},
           {"tid", 8},
           {"ts", 1025},
           {"dur", 1},
           {"args",
            {{"cuda_sync_kind", "Stream Wait Event"},
             {"stream", 8},
             {"correlation", 901},
             {"wait_on_stream", 20},
             {"wait_on_cuda_event_record_corr_id", 900},
             {"wait_on_cuda_event_id", 3}}}});
  }
  return b.text();
}

// Whether the op labelled `waiter` depends on the op labelled `producer`.
bool waits_for(const kineto::RankProgram& p, const std::string& waiter,
               const std::string& producer) {
  auto index = [&](const std::string& label) {
    return static_cast<uint32_t>(
        std::find_if(p.ops.begin(), p.ops.end(),
                     [&](const kineto::ProgramOp& op) { return op.label == label; }) -
        p.ops.begin());
  };
  const auto& deps = p.ops.at(index(waiter)).deps;
  return std::find(deps.begin(), deps.end(), index(producer)) != deps.end();
}

// With the event only the waiting stream's kernel ("y") waits; without it the thread's next
// launch ("x") does.
void expect_waits(bool with_sync_event) {
  const auto t = kineto::read_kineto_bytes(trace(with_sync_event));
  const auto& p = t.programs.at(0);
  EXPECT_EQ(waits_for(p, "y", "producer"), with_sync_event);
  EXPECT_EQ(waits_for(p, "x", "producer"), !with_sync_event);
  EXPECT_EQ(p.counts.stream_waits, 1u);
  EXPECT_EQ(p.counts.synced_stream_waits, with_sync_event ? 1u : 0u);
}

TEST(KinetoSync, StreamWaitEventMakesOnlyTheWaitingStreamWait) {
  expect_waits(true);
}

TEST(KinetoSync, WithoutTheEventTheThreadsNextLaunchWaits) {
  expect_waits(false);
}

}  // namespace
}  // namespace racksim
