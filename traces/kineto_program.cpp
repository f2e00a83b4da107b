#include "traces/kineto_program.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/intervals.h"
#include "traces/kineto_collectives.h"

namespace racksim::kineto {

namespace {

constexpr std::string_view kStepPrefix = "ProfilerStep#";

bool is_step(const Event& e) {
  return (e.category == EventCategory::kUserAnnotation || e.category == EventCategory::kCpuOp) &&
         e.name.rfind(kStepPrefix, 0) == 0;
}

std::optional<int64_t> step_number(const Event& e) {
  const std::string digits = e.name.substr(kStepPrefix.size());
  if (digits.empty() || digits.size() > 15 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoll(digits);
}

bool is_gpu(const Event& e) {
  return e.category == EventCategory::kKernel || e.category == EventCategory::kMemcpy ||
         e.category == EventCategory::kMemset;
}

bool is_sync_call(std::string_view name) {
  return name == "cudaDeviceSynchronize" || name == "cudaStreamSynchronize" ||
         name == "cudaEventSynchronize";
}

void sort_by_time(std::vector<const Event*>& events) {
  std::stable_sort(events.begin(), events.end(),
                   [](const Event* a, const Event* b) { return a->ts_us < b->ts_us; });
}

// Kernel names are C++ signatures; the report needs the function's name.
std::string short_label(std::string_view name) {
  if (name.rfind("void ", 0) == 0) name.remove_prefix(5);
  const size_t cut = std::min(name.find('('), name.find('<'));
  if (cut != std::string_view::npos && cut > 0) name = name.substr(0, cut);
  return std::string(name.substr(0, 80));
}

std::vector<RecordedStream> union_busy(const RankProgram& p) {
  std::vector<std::vector<std::pair<double, double>>> spans(p.streams.size());
  for (const ProgramOp& op : p.ops) {
    if (p.streams[op.stream].kind == StreamKind::kHost) continue;
    spans[op.stream].emplace_back(op.recorded_start_s, op.recorded_end_s);
  }
  std::vector<RecordedStream> result;
  for (size_t s = 0; s < spans.size(); ++s) {
    if (spans[s].empty()) continue;
    const uint64_t ops = spans[s].size();
    result.push_back({p.streams[s].name, union_length(std::move(spans[s])), ops});
  }
  return result;
}

class ProgramBuilder {
 public:
  ProgramBuilder(const KinetoRank& rank, const Event& step)
      : rank_(rank), t0_(step.ts_us), t1_(step.ts_us + step.dur_us), step_tid_(step.tid) {
    p_.file = rank.file;
    p_.source_rank = rank.rank;
    p_.world_size = rank.world_size;
    p_.step_name = step.name;
  }

  RankProgram build();

 private:
  struct Thread {
    uint32_t stream = 0;
    double end_us = 0;
    std::vector<std::pair<double, uint32_t>> ends;  // (recorded end, op) of its host ops
    double record_us = -1;                          // its latest cudaEventRecord
    double wait_record_us = -1;  // a cudaStreamWaitEvent not yet applied to a launch
  };
  struct GpuStream {
    uint32_t stream = 0;
    std::vector<std::pair<double, uint32_t>> launched;  // (launch time, op)
  };

  double rel_s(double ts_us) const { return (ts_us - t0_) * 1e-6; }
  uint32_t add_stream(std::string name, StreamKind kind);
  Thread& thread(int64_t tid);
  GpuStream& gpu_stream(int64_t id);
  void collect();
  void add_call(const Event& call);
  // A synchronizing call: the host's time up to it as an op of its own, then the call, which
  // waits for the GPU work launched before it (before the event it waits on).
  void add_sync_wait(const Event& call, const Thread& t, double from, double end, ProgramOp& op);
  std::optional<std::pair<double, uint32_t>> anchor(int64_t tid, double ts_us) const;
  std::vector<uint32_t> launched_before(double ts_us, int64_t except_stream) const;
  uint32_t add_op(ProgramOp op);
  void add_gpu(const Event& gpu, std::optional<uint32_t> launch, Thread* thread, double launch_us,
               int64_t launch_tid);
  const CollectiveArgs* collective_args(const Event& gpu, int64_t tid, double launch_us) const;
  const Event* enclosing_gemm(int64_t tid, double launch_us) const;
  void note_gemm(ProgramOp& op, int64_t tid, double launch_us);
  void finish();

  const KinetoRank& rank_;
  double t0_, t1_;
  int64_t step_tid_;
  RankProgram p_;
  std::unordered_map<int64_t, std::vector<const Event*>> gpu_by_call_;
  std::vector<const Event*> items_;  // runtime calls and GPU work without a launch, by time
  std::map<int64_t, Thread> threads_;
  std::map<int64_t, GpuStream> gpu_streams_;
  std::unordered_map<int64_t, std::vector<const Event*>> nccl_annotations_;  // by thread
  std::unordered_map<int64_t, std::vector<const Event*>> gemm_ops_;          // by thread, by start
  std::unordered_set<const Event*> gemm_launched_;        // GEMM ops seen launching
  std::unordered_map<int64_t, const Event*> calls_;       // correlation -> runtime call
  std::unordered_map<int64_t, const Event*> sync_waits_;  // cudaStreamWaitEvent's correlation
  std::unordered_map<int64_t, std::vector<uint32_t>> pending_waits_;  // by waiting stream
  bool stream_wait_from_sync(const Event& call);
  // Optimizer.step annotations and autograd evaluate_function ops, by thread, by start.
  std::unordered_map<int64_t, std::vector<const Event*>> phase_markers_;
  Phase phase_of_launch(int64_t tid, double launch_us) const;
};

// The marker that starts last at or before `launch_us` and still runs then says the phase.
Phase ProgramBuilder::phase_of_launch(int64_t tid, double launch_us) const {
  const auto list = phase_markers_.find(tid);
  if (list == phase_markers_.end()) return Phase::kForward;
  const auto it = std::upper_bound(list->second.begin(), list->second.end(), launch_us,
                                   [](double t, const Event* e) { return t < e->ts_us; });
  if (it == list->second.begin()) return Phase::kForward;
  const Event* marker = *std::prev(it);
  if (marker->ts_us + marker->dur_us < launch_us) return Phase::kForward;
  return marker->name.rfind("Optimizer.step", 0) == 0 ? Phase::kOptimizer : Phase::kBackward;
}

uint32_t ProgramBuilder::add_stream(std::string name, StreamKind kind) {
  p_.streams.push_back({std::move(name), kind});
  return static_cast<uint32_t>(p_.streams.size() - 1);
}

ProgramBuilder::Thread& ProgramBuilder::thread(int64_t tid) {
  auto [it, inserted] = threads_.try_emplace(tid);
  if (inserted) {
    const bool main = tid == step_tid_;
    it->second.stream = add_stream(
        main ? "cpu.main"
             : fmt::format("cpu.{}", threads_.size() - (threads_.count(step_tid_) ? 1 : 0)),
        StreamKind::kHost);
    it->second.end_us = t0_;
  }
  return it->second;
}

ProgramBuilder::GpuStream& ProgramBuilder::gpu_stream(int64_t id) {
  auto [it, inserted] = gpu_streams_.try_emplace(id);
  if (inserted) it->second.stream = add_stream(fmt::format("stream {}", id), StreamKind::kCompute);
  return it->second;
}

void ProgramBuilder::collect() {
  std::unordered_map<int64_t, const Event*>& calls = calls_;  // the whole trace's
  for (const Event& e : rank_.events) {
    if (e.category == EventCategory::kRuntime && e.correlation >= 0)
      calls.emplace(e.correlation, &e);
    if (e.category == EventCategory::kSync && e.name == "Stream Wait Event" && e.stream >= 0 &&
        e.wait_on_stream >= 0 && e.wait_record_correlation >= 0) {
      sync_waits_.emplace(e.correlation, &e);
    }
  }
  const auto in_step = [&](double ts) { return ts >= t0_ && ts < t1_; };
  for (const Event& e : rank_.events) {
    if (e.category == EventCategory::kRuntime && in_step(e.ts_us)) items_.push_back(&e);
    if (e.collective >= 0 && !is_gpu(e)) nccl_annotations_[e.tid].push_back(&e);
    if (e.gemm >= 0) gemm_ops_[e.tid].push_back(&e);
    if ((e.category == EventCategory::kUserAnnotation || e.category == EventCategory::kCpuOp) &&
        (e.name.rfind("Optimizer.step", 0) == 0 ||
         e.name.rfind("autograd::engine::evaluate_function", 0) == 0)) {
      phase_markers_[e.tid].push_back(&e);
    }
    if (!is_gpu(e)) continue;
    const auto call = e.correlation >= 0 ? calls.find(e.correlation) : calls.end();
    if (call != calls.end()) {
      if (in_step(call->second->ts_us)) gpu_by_call_[e.correlation].push_back(&e);
    } else if (in_step(e.ts_us)) {
      items_.push_back(&e);  // GPU work whose launch is not in the trace
    }
  }
  sort_by_time(items_);
  for (auto& [corr, list] : gpu_by_call_) {
    sort_by_time(list);
  }
  for (auto& [tid, list] : phase_markers_) {
    sort_by_time(list);
  }
  for (auto& [tid, list] : nccl_annotations_) {
    sort_by_time(list);
  }
  for (auto& [tid, list] : gemm_ops_) {
    sort_by_time(list);
  }
}

uint32_t ProgramBuilder::add_op(ProgramOp op) {
  p_.ops.push_back(std::move(op));
  return static_cast<uint32_t>(p_.ops.size() - 1);
}

// The latest host op another thread ended at or before `ts_us`.
std::optional<std::pair<double, uint32_t>> ProgramBuilder::anchor(int64_t tid, double ts_us) const {
  std::optional<std::pair<double, uint32_t>> best;
  for (const auto& [other, t] : threads_) {
    if (other == tid) continue;
    // A thread's host ops end in order: the last one ended by `ts_us`.
    const auto it =
        std::upper_bound(t.ends.begin(), t.ends.end(), std::make_pair(ts_us, UINT32_MAX));
    if (it == t.ends.begin()) continue;
    if (!best || std::prev(it)->first > best->first) best = *std::prev(it);
  }
  return best;
}

// The last GPU op of each stream (but `except_stream`) launched before `ts_us`.
std::vector<uint32_t> ProgramBuilder::launched_before(double ts_us, int64_t except_stream) const {
  std::vector<uint32_t> ops;
  for (const auto& [id, s] : gpu_streams_) {
    if (id == except_stream) continue;
    const auto it =
        std::lower_bound(s.launched.begin(), s.launched.end(), std::make_pair(ts_us, uint32_t{0}));
    if (it != s.launched.begin()) ops.push_back(std::prev(it)->second);
  }
  return ops;
}

void ProgramBuilder::add_sync_wait(const Event& call, const Thread& t, double from, double end,
                                   ProgramOp& op) {
  const double limit =
      call.name == "cudaEventSynchronize" && t.record_us >= 0 ? t.record_us : call.ts_us;
  const std::vector<uint32_t> waited = launched_before(limit, -1);
  double waited_end = 0;
  for (uint32_t w : waited) waited_end = std::max(waited_end, p_.ops[w].recorded_end_s);
  ProgramOp before = op;
  before.label = "host";
  before.duration_s = std::max(0.0, (call.ts_us - from) * 1e-6);
  before.recorded_start_s = rel_s(from);
  before.recorded_end_s = rel_s(call.ts_us);
  const uint32_t first = add_op(std::move(before));
  op.deps = waited;
  op.deps.push_back(first);
  op.duration_s = std::max(0.0, rel_s(end) - std::max(rel_s(call.ts_us), waited_end));
  ++p_.counts.syncs;
}

void ProgramBuilder::add_call(const Event& call) {
  Thread& t = thread(call.tid);
  if (call.name == "cudaEventRecord") {
    t.record_us = call.ts_us;
    return;
  }
  if (call.name == "cudaStreamWaitEvent") {
    if (!stream_wait_from_sync(call))
      t.wait_record_us = t.record_us >= 0 ? t.record_us : call.ts_us;
    return;
  }
  // The call's GPU work, taken once (two calls may claim one correlation id).
  std::vector<const Event*> gpu;
  if (const auto it = gpu_by_call_.find(call.correlation); it != gpu_by_call_.end()) {
    gpu = std::move(it->second);
    gpu_by_call_.erase(it);
  }
  const bool sync = is_sync_call(call.name);
  if (!sync && gpu.empty()) return;  // its time joins the next host op's gap
  ProgramOp op;
  op.kind = ProgramOpKind::kHost;
  op.stream = t.stream;
  op.event = call.index;
  op.label = call.name;
  double from = t.end_us;
  if (call.ts_us - t.end_us > kAnchorGapUs) {
    if (const auto a = anchor(call.tid, call.ts_us); a && a->first > from) {
      from = a->first;
      op.deps.push_back(a->second);
      ++p_.counts.thread_anchors;
    }
  }
  const double end = std::max(call.ts_us + call.dur_us, t.end_us);
  if (sync) {
    add_sync_wait(call, t, from, end, op);
  } else {
    op.duration_s = std::max(0.0, (end - from) * 1e-6);
  }
  op.recorded_start_s = rel_s(from);
  op.recorded_end_s = rel_s(end);
  const uint32_t id = add_op(std::move(op));
  ++p_.counts.host_ops;
  t.end_us = end;
  t.ends.emplace_back(end, id);
  for (const Event* g : gpu) add_gpu(*g, id, &t, call.ts_us, call.tid);
}

const CollectiveArgs* ProgramBuilder::collective_args(const Event& gpu, int64_t tid,
                                                      double launch_us) const {
  const CollectiveArgs* own = gpu.collective >= 0 ? &rank_.collectives[gpu.collective] : nullptr;
  if (own && !own->name.empty()) return own;
  const auto list = nccl_annotations_.find(tid);
  if (list == nccl_annotations_.end()) return own;
  const Event* enclosing = nullptr;
  for (const Event* a : list->second) {
    if (a->ts_us > launch_us) break;
    if (a->ts_us + a->dur_us >= launch_us) enclosing = a;
  }
  return enclosing ? &rank_.collectives[enclosing->collective] : own;
}

void ProgramBuilder::add_gpu(const Event& gpu, std::optional<uint32_t> launch, Thread* t,
                             double launch_us, int64_t launch_tid) {
  GpuStream& s = gpu_stream(gpu.stream);
  ProgramOp op;
  op.stream = s.stream;
  op.event = gpu.index;
  op.label = short_label(gpu.name);
  op.kind = ProgramOpKind::kKernel;
  op.phase = phase_of_launch(launch_tid, launch_us);
  op.duration_s = gpu.dur_us * 1e-6;
  op.recorded_start_s = rel_s(gpu.ts_us);
  op.recorded_end_s = rel_s(gpu.ts_us + gpu.dur_us);
  if (launch) op.deps.push_back(*launch);
  if (const auto w = pending_waits_.find(gpu.stream); w != pending_waits_.end()) {
    op.deps.insert(op.deps.end(), w->second.begin(), w->second.end());
    pending_waits_.erase(w);
  }
  if (t && t->wait_record_us >= 0) {
    for (uint32_t d : launched_before(t->wait_record_us, gpu.stream)) op.deps.push_back(d);
    t->wait_record_us = -1;
    ++p_.counts.stream_waits;
  }
  if (gpu.category == EventCategory::kMemcpy) {
    const bool h2d = gpu.name.find("HtoD") != std::string::npos;
    const bool d2h = gpu.name.find("DtoH") != std::string::npos;
    if ((h2d || d2h) && gpu.bytes >= 0) {
      op.kind = ProgramOpKind::kCopy;
      op.bytes = gpu.bytes;
      op.direction = h2d ? CopyDirection::kHostToDevice : CopyDirection::kDeviceToHost;
      ++p_.counts.copies;
    } else {
      ++p_.counts.device_copies;
    }
  } else if (gpu.category == EventCategory::kMemset) {
    ++p_.counts.memsets;
  } else if (is_nccl_kernel_name(gpu.name) || gpu.collective >= 0) {
    const CollectiveArgs* args = collective_args(gpu, launch_tid, launch_us);
    if (resolve_collective(rank_, gpu, args, &op)) {
      ++p_.counts.collectives;
    } else {
      ++p_.counts.p2p_kernels;
    }
  } else {
    ++p_.counts.kernels;
    if (launch) note_gemm(op, launch_tid, launch_us);
  }
  if (!launch) ++p_.counts.unlaunched;
  const uint32_t id = add_op(std::move(op));
  s.launched.emplace_back(launch_us, id);
}

// A cudaStreamWaitEvent whose cuda_sync event names the waiting stream, the stream waited on
// and the cudaEventRecord: the waiting stream's next GPU op waits for the last GPU op launched
// on the recorded stream before the record. False when the trace does not say (older traces).
bool ProgramBuilder::stream_wait_from_sync(const Event& call) {
  const auto sync = sync_waits_.find(call.correlation);
  if (call.correlation < 0 || sync == sync_waits_.end()) return false;
  const auto record = calls_.find(sync->second->wait_record_correlation);
  if (record == calls_.end()) return false;
  ++p_.counts.stream_waits;
  ++p_.counts.synced_stream_waits;
  const auto producer = gpu_streams_.find(sync->second->wait_on_stream);
  if (producer == gpu_streams_.end()) return true;  // nothing launched there yet
  const auto& launched = producer->second.launched;
  const auto it = std::lower_bound(launched.begin(), launched.end(),
                                   std::make_pair(record->second->ts_us, uint32_t{0}));
  if (it != launched.begin()) pending_waits_[sync->second->stream].push_back(std::prev(it)->second);
  return true;
}

// The innermost GEMM operator running on thread `tid` at `launch_us`: the latest-starting one
// that contains it (aten::linear -> aten::addmm -> the launch gives the addmm).
const Event* ProgramBuilder::enclosing_gemm(int64_t tid, double launch_us) const {
  constexpr int kLookBack = 64;  // ended siblings between an operator and its launch
  const auto list = gemm_ops_.find(tid);
  if (list == gemm_ops_.end()) return nullptr;
  auto it = std::upper_bound(list->second.begin(), list->second.end(), launch_us,
                             [](double t, const Event* e) { return t < e->ts_us; });
  for (int step = 0; step < kLookBack && it != list->second.begin(); ++step) {
    const Event* e = *--it;
    if (e->ts_us + e->dur_us >= launch_us) return e;
  }
  return nullptr;
}

void ProgramBuilder::note_gemm(ProgramOp& op, int64_t tid, double launch_us) {
  const Event* gemm = enclosing_gemm(tid, launch_us);
  if (gemm == nullptr) return;
  const GemmCall& call = rank_.gemms[gemm->gemm];
  op.gemm = call.shape;
  op.gemm_dtype = call.dtype;
  op.gemm_first = gemm_launched_.insert(gemm).second;
  ++p_.counts.gemm_kernels;
}

void ProgramBuilder::finish() {
  // The step ends when its annotation does: the main thread's work after its last launch.
  Thread& main = thread(step_tid_);
  if (t1_ > main.end_us) {
    ProgramOp tail;
    tail.stream = main.stream;
    tail.label = "host";
    tail.duration_s = (t1_ - main.end_us) * 1e-6;
    tail.recorded_start_s = rel_s(main.end_us);
    tail.recorded_end_s = rel_s(t1_);
    if (const auto a = anchor(step_tid_, t1_); a && a->first > main.end_us) {
      tail.deps.push_back(a->second);
      tail.duration_s = (t1_ - a->first) * 1e-6;
    }
    add_op(std::move(tail));
  }
  // A stream that only runs collectives is a communication stream.
  std::vector<bool> only_comm(p_.streams.size(), true);
  for (const ProgramOp& op : p_.ops) {
    if (op.kind != ProgramOpKind::kCollective) only_comm[op.stream] = false;
  }
  for (const auto& [id, s] : gpu_streams_) {
    if (only_comm[s.stream]) p_.streams[s.stream].kind = StreamKind::kComm;
  }
  double end_s = rel_s(t1_);
  for (const ProgramOp& op : p_.ops) end_s = std::max(end_s, op.recorded_end_s);
  p_.step_time_s = end_s;
  p_.recorded = union_busy(p_);
}

RankProgram ProgramBuilder::build() {
  collect();
  for (const Event* e : items_) {
    if (e->category == EventCategory::kRuntime) {
      add_call(*e);
    } else {
      add_gpu(*e, std::nullopt, nullptr, e->ts_us, e->tid);
    }
  }
  finish();
  return std::move(p_);
}

}  // namespace

std::vector<int64_t> profiler_steps(const KinetoRank& rank) {
  std::vector<std::pair<double, int64_t>> steps;
  for (const Event& e : rank.events) {
    if (!is_step(e)) continue;
    if (const auto n = step_number(e)) steps.emplace_back(e.ts_us, *n);
  }
  std::sort(steps.begin(), steps.end());
  std::vector<int64_t> numbers;
  for (const auto& [ts, n] : steps) numbers.push_back(n);
  return numbers;
}

RankProgram build_program(const KinetoRank& rank, int64_t step) {
  const Event* chosen = nullptr;
  std::vector<int64_t> seen;
  for (const Event& e : rank.events) {
    if (!is_step(e)) continue;
    const auto n = step_number(e);
    if (!n) continue;
    seen.push_back(*n);
    const bool wanted = step >= 0 ? *n == step : e.dur_us > 0;
    if (wanted && (chosen == nullptr || e.ts_us > chosen->ts_us)) chosen = &e;
  }
  if (chosen == nullptr) {
    std::sort(seen.begin(), seen.end());
    throw InputError({rank.file, 0, 0}, "--step",
                     seen.empty() ? std::string("the trace has no ProfilerStep# annotation: "
                                                "record it with torch.profiler's schedule and "
                                                "prof.step()")
                                  : fmt::format("no ProfilerStep#{} (the trace has steps {})", step,
                                                fmt::join(seen, ", ")));
  }
  return ProgramBuilder(rank, *chosen).build();
}

}  // namespace racksim::kineto
