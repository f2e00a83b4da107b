#include "tests/support/kineto_trace.h"

namespace racksim::testing {

using nlohmann::json;

KinetoTraceBuilder::KinetoTraceBuilder(int rank, int world_size) {
  json ranks = json::array();
  for (int r = 0; r < world_size; ++r) ranks.push_back(r);
  trace_ = {{"schemaVersion", 1},
            {"deviceProperties", json::array({{{"id", 0}, {"name", "NVIDIA A100-SXM4-80GB"}}})},
            {"distributedInfo",
             {{"backend", "nccl"},
              {"rank", rank},
              {"world_size", world_size},
              {"pg_config",
               json::array({{{"pg_name", "0"}, {"pg_desc", "default_pg"}, {"ranks", ranks}}})}}},
            {"traceEvents", json::array()}};
}

KinetoTraceBuilder& KinetoTraceBuilder::runtime_call(const std::string& name, double ts,
                                                     int correlation) {
  return raw({{"ph", "X"},
              {"cat", "cuda_runtime"},
              {"name", name},
              {"pid", 1},
              {"tid", 1},
              {"ts", ts},
              {"dur", 2},
              {"args", {{"correlation", correlation}}}});
}

KinetoTraceBuilder& KinetoTraceBuilder::raw(json event) {
  trace_["traceEvents"].push_back(std::move(event));
  return *this;
}

KinetoTraceBuilder& KinetoTraceBuilder::step(int number, double ts, double dur) {
  return raw({{"ph", "X"},
              {"cat", "user_annotation"},
              {"name", "ProfilerStep#" + std::to_string(number)},
              {"pid", 1},
              {"tid", 1},
              {"ts", ts},
              {"dur", dur}});
}

json& KinetoTraceBuilder::launch(double ts, int tid) {
  raw({{"ph", "X"},
       {"cat", "cuda_runtime"},
       {"name", "cudaLaunchKernel"},
       {"pid", 1},
       {"tid", tid},
       {"ts", ts},
       {"dur", 5},
       {"args", {{"correlation", correlation_}}}});
  return trace_["traceEvents"].back();
}

KinetoTraceBuilder& KinetoTraceBuilder::kernel(const std::string& name, double launch_ts, double ts,
                                               double dur, int stream, int tid) {
  launch(launch_ts, tid);
  raw({{"ph", "X"},
       {"cat", "kernel"},
       {"name", name},
       {"pid", 0},
       {"tid", stream},
       {"ts", ts},
       {"dur", dur},
       {"args", {{"stream", stream}, {"correlation", correlation_++}}}});
  return *this;
}

KinetoTraceBuilder& KinetoTraceBuilder::all_reduce(double elements, const std::vector<int>& ranks,
                                                   double launch_ts, double ts, double dur,
                                                   int stream) {
  launch(launch_ts, 1);
  std::string text = "[";
  for (size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  text += "]";
  raw({{"ph", "X"},
       {"cat", "kernel"},
       {"name", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"},
       {"pid", 0},
       {"tid", stream},
       {"ts", ts},
       {"dur", dur},
       {"args",
        {{"stream", stream},
         {"correlation", correlation_++},
         {"Collective name", "allreduce"},
         {"In msg nelems", elements},
         {"Out msg nelems", elements},
         {"Group size", ranks.size()},
         {"dtype", "Float"},
         {"Process Group Name", "0"},
         {"Process Group Ranks", text}}}});
  return *this;
}

}  // namespace racksim::testing
