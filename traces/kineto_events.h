// One rank's PyTorch profiler (Kineto) trace, read from its Chrome trace-event JSON (gzipped or
// not, detected by the magic bytes) into checked value types: what the graph builder
// (workloads/kineto_graph.h) needs of each event, nothing of the JSON afterwards.
//
// Kept: complete events ("ph": "X") of the categories cpu_op, user_annotation, cuda_runtime,
// kernel, gpu_memcpy, gpu_memset and cuda_sync; `distributedInfo` (rank, world size, process
// groups); the GPU name from `deviceProperties`. Flow events (ac2g) are not needed: the launch and
// its GPU work share `args.correlation`.
//
// Errors are InputErrors naming the file, the event (traceEvents[i]) and the field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/event_graph.h"

namespace racksim::kineto {

enum class EventCategory : uint8_t {
  kCpuOp,           // cpu_op (aten operators)
  kUserAnnotation,  // user_annotation: ProfilerStep#N, nccl:* (older PyTorch), record_function
  kRuntime,         // cuda_runtime: cudaLaunchKernel, cudaMemcpyAsync, cudaStreamSynchronize...
  kKernel,          // kernel on a GPU stream
  kMemcpy,          // gpu_memcpy
  kMemset,          // gpu_memset
  kSync,            // cuda_sync (enable_cuda_sync_events): "Stream Wait Event" names its streams
};

// What an NCCL kernel's args (newer PyTorch) or an nccl:* annotation (older) say.
struct CollectiveArgs {
  std::string name;         // "allreduce", "all_reduce", "_all_gather_base", ...
  double in_elements = -1;  // -1: not given
  double out_elements = -1;
  double element_bytes = 0;  // from dtype / Input type; 0: unknown
  DataType dtype = DataType::kFp32;
  int group_size = -1;
  std::string group_name;     // Process Group Name ("" if absent)
  std::vector<RankId> ranks;  // Process Group Ranks (empty if absent)
};

// A GEMM operator (aten::mm, addmm, bmm, matmul, linear) whose Input Dims give its shape
// (traces/kineto_gemm.h).
struct GemmCall {
  KernelShape shape;
  DataType dtype = DataType::kFp32;
};

struct Event {
  uint32_t index = 0;  // position in traceEvents, for messages
  EventCategory category = EventCategory::kCpuOp;
  std::string name;
  int64_t tid = 0;
  double ts_us = 0;
  double dur_us = 0;
  int64_t stream = -1;       // GPU events: args.stream
  int64_t correlation = -1;  // runtime calls and GPU events: args.correlation
  double bytes = -1;         // memcpy/memset: args.bytes
  int32_t collective = -1;   // index into KinetoRank::collectives
  int32_t gemm = -1;         // cpu_op: index into KinetoRank::gemms
  // cuda_sync: the stream waited on, and the correlation id of the cudaEventRecord it waits for
  // (args.stream is the waiting stream, args.correlation the cudaStreamWaitEvent call's).
  int64_t wait_on_stream = -1;
  int64_t wait_record_correlation = -1;
};

struct ProcessGroupConfig {
  std::string name;  // pg_name
  std::string description;
  std::vector<RankId> ranks;
};

struct KinetoRank {
  std::string file;
  int rank = -1;        // distributedInfo.rank (-1: absent)
  int world_size = -1;  // distributedInfo.world_size (-1: absent)
  std::string gpu;      // deviceProperties[0].name ("" if absent)
  std::vector<ProcessGroupConfig> groups;
  std::vector<Event> events;  // the kept events, in file order
  std::vector<CollectiveArgs> collectives;
  std::vector<GemmCall> gemms;
};

// Decompresses when gzipped (magic bytes 1f 8b); `name` stands for the file in messages.
// Throws InputError for corrupt or truncated gzip data, and beyond `max_bytes` of output.
std::string decompressed(std::string_view bytes, const std::string& name,
                         size_t max_bytes = size_t{8} << 30);

// Whether the bytes (gzipped or not) begin like a Kineto trace: a JSON object whose first
// few kilobytes name traceEvents, schemaVersion or distributedInfo.
bool looks_like_kineto(std::string_view bytes);

// Whether the file at `path` looks like a Kineto trace (false when it cannot be read).
bool is_kineto_file(const std::string& path);

// Parses one rank's trace. Throws InputError naming `file`, the line (for JSON syntax errors)
// or the event index and field.
// `max_bytes`: the most the JSON may decompress to.
KinetoRank parse_kineto(std::string_view bytes, const std::string& file,
                        size_t max_bytes = size_t{8} << 30);

KinetoRank read_kineto_file(const std::string& path);

// Bytes per element of a PyTorch dtype name as Kineto writes it ("Float", "BFloat16",
// "c10::Half", "long", "unsigned char", ...); 0 when unknown.
double dtype_bytes(std::string_view name);

}  // namespace racksim::kineto
