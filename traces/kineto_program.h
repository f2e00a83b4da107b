// One profiling step of one rank's Kineto trace as a program of operations: what the rank's
// CPU threads and GPU streams did, with the dependencies the trace shows. The reader
// (traces/kineto_reader.h) emits a program into the event graph once per simulated rank.
//
// What becomes what:
//   - each CPU thread that calls the CUDA runtime is a host stream ("cpu.main" for the thread
//     of the ProfilerStep annotation, "cpu.1", "cpu.2", ... for the others, in order of first
//     call). Each launch (a runtime call whose correlation id has GPU work) is a host op
//     lasting from the end of the thread's previous host op to the end of the call, so the
//     host gaps between launches are replayed: a CPU-bound rank stays CPU-bound. A thread
//     resuming after more than kAnchorGapUs waits for the latest host op another thread ended
//     before (the hand-over between the main thread and the autograd thread).
//   - cudaDeviceSynchronize / cudaStreamSynchronize / cudaEventSynchronize block the thread
//     until the GPU work launched before them (before the latest cudaEventRecord, for an event)
//     ends; the call's recorded wait is replaced by that dependency, its tail after the GPU
//     work ended is kept.
//   - cudaStreamWaitEvent with its cuda_sync "Stream Wait Event" (traces recorded with
//     enable_cuda_sync_events): the waiting stream's next GPU op waits for the last GPU op
//     launched on the recorded stream before the cudaEventRecord the event names.
//     Without one, cudaEventRecord then cudaStreamWaitEvent on a thread: the next GPU op that
//     thread launches waits for the last GPU op of every other stream launched before the
//     record (older traces do not say which stream recorded the event).
//   - kernels run on their stream ("stream <id>") with their recorded durations (a kernel
//     launched inside aten::mm/addmm/bmm/matmul/linear carries the GEMM's shape, for
//     --compute model: traces/kineto_gemm.h); NCCL kernels
//     become collectives (kind, bytes, group from their args, or from the nccl:* annotation
//     around their launch); send/recv kernels keep their recorded duration.
//   - gpu_memcpy HtoD / DtoH become host<->device copies of their bytes; DtoD copies and
//     memsets keep their recorded duration (they stay on the GPU).
//   - GPU work is charged to a phase by its launch: inside an Optimizer.step annotation, the
//     optimizer; inside an autograd::engine::evaluate_function op, backward; else forward.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/event_graph.h"
#include "traces/kineto_events.h"

namespace racksim::kineto {

inline constexpr double kAnchorGapUs = 100;

enum class ProgramOpKind : uint8_t { kHost, kKernel, kCollective, kCopy };

struct ProgramOp {
  ProgramOpKind kind = ProgramOpKind::kHost;
  uint32_t stream = 0;          // index into RankProgram::streams
  uint32_t event = 0;           // traceEvents index, for messages
  std::string label;            // kernel or call name (shortened)
  double duration_s = 0;        // host and kernel ops
  double bytes = 0;             // collectives (nccl-tests convention) and copies
  Phase phase = Phase::kOther;  // GPU work: forward, backward or optimizer
  CollectiveKind collective = CollectiveKind::kAllReduce;
  DataType dtype = DataType::kFp32;
  std::vector<RankId> group;  // collectives: members in the trace's numbering; empty: the world
  std::string group_name;     // process group name, "" if unknown
  CopyDirection direction = CopyDirection::kHostToDevice;
  std::vector<uint32_t> deps;   // earlier ops of the program (same stream order is implicit)
  double recorded_start_s = 0;  // from the step start
  double recorded_end_s = 0;
  // Kernels launched inside a GEMM operator whose Input Dims give its shape (gemm.known()):
  // the shape, and whether this is the operator's first kernel (the one --compute model
  // times; later ones, such as a split-K reduction, are part of the same GEMM).
  KernelShape gemm;
  DataType gemm_dtype = DataType::kFp32;
  bool gemm_first = false;
};

struct ProgramStream {
  std::string name;
  StreamKind kind = StreamKind::kCompute;
};

struct RecordedStream {
  std::string name;
  double busy_s = 0;  // union of the stream's GPU op intervals in the step
  uint64_t ops = 0;
};

struct ProgramCounts {
  uint64_t kernels = 0, collectives = 0, p2p_kernels = 0, copies = 0, device_copies = 0,
           memsets = 0, host_ops = 0, syncs = 0, stream_waits = 0, thread_anchors = 0,
           unlaunched = 0, gemm_kernels = 0,
           synced_stream_waits = 0;  // of stream_waits, those a cuda_sync event located
};

struct RankProgram {
  std::string file;
  int source_rank = -1;
  int world_size = -1;
  std::string step_name;   // "ProfilerStep#6"
  double step_time_s = 0;  // recorded: step start to the later of its end and its GPU work's
  std::vector<ProgramStream> streams;
  std::vector<ProgramOp> ops;            // in an order where deps come first
  std::vector<RecordedStream> recorded;  // GPU streams
  ProgramCounts counts;
};

// The ProfilerStep#N numbers of the trace, in time order.
std::vector<int64_t> profiler_steps(const KinetoRank& rank);

// Builds the program of step `step` (-1: the last ProfilerStep with a duration). Throws
// InputError naming the file for a missing step, and the event and field for what cannot be
// replayed (a collective without a size, a group that does not hold the rank).
RankProgram build_program(const KinetoRank& rank, int64_t step);

}  // namespace racksim::kineto
