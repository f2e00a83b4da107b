// Small synthetic Kineto (PyTorch profiler) traces for tests: a ProfilerStep on the main
// thread, launches with correlation ids, kernels on streams and NCCL kernels with the args
// newer PyTorch writes. Times in microseconds, as Kineto writes them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace racksim::testing {

class KinetoTraceBuilder {
 public:
  KinetoTraceBuilder(int rank, int world_size);

  // ProfilerStep#number on the main thread (tid 1) over [ts, ts + dur).
  KinetoTraceBuilder& step(int number, double ts, double dur);
  // cudaLaunchKernel on `tid` at launch_ts (5 us) and its kernel on `stream`.
  KinetoTraceBuilder& kernel(const std::string& name, double launch_ts, double ts, double dur,
                             int stream = 7, int tid = 1);
  // An NCCL all-reduce kernel of `elements` floats over `ranks`, launched like a kernel.
  KinetoTraceBuilder& all_reduce(double elements, const std::vector<int>& ranks, double launch_ts,
                                 double ts, double dur, int stream = 20);
  // A CUDA runtime call on the main thread (2 us) with its correlation id, e.g.
  // cudaEventRecord or cudaStreamWaitEvent.
  KinetoTraceBuilder& runtime_call(const std::string& name, double ts, int correlation);
  // Any event, as given.
  KinetoTraceBuilder& raw(nlohmann::json event);

  nlohmann::json document() const { return trace_; }
  std::string text() const { return trace_.dump(); }

 private:
  nlohmann::json& launch(double ts, int tid);

  nlohmann::json trace_;
  int correlation_ = 1;
};

}  // namespace racksim::testing
