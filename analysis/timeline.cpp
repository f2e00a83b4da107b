#include "analysis/timeline.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "graph/graph_check.h"

namespace racksim::analysis {

namespace {

// Passive recvs overlap the sends of their stream, and events of one thread must nest, so
// recvs get a thread of their own.
uint32_t thread_of(const Op& op, size_t streams) {
  return op.kind == OpKind::kRecv ? static_cast<uint32_t>(streams + op.stream) : op.stream;
}

// Communicators of thousands of ranks would bloat every event: list the first ones.
constexpr size_t kMaxListedPeers = 256;

std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump();
}

std::string op_args(const EventGraph& g, const Op& op) {
  std::string args =
      fmt::format("\"kind\":\"{}\",\"phase\":\"{}\"", to_string(op.kind), to_string(op.phase));
  if (op.micro_batch >= 0) args += fmt::format(",\"micro_batch\":{}", op.micro_batch);
  if (op.layer >= 0) args += fmt::format(",\"layer\":{}", op.layer);
  switch (op.kind) {
    case OpKind::kCompute:
      args += fmt::format(",\"class\":\"{}\",\"flops\":{:.6g},\"hbm_bytes\":{:.6g}",
                          to_string(op.op_class), op.amount, op.hbm_bytes);
      break;
    case OpKind::kCollective: {
      const auto& members = g.communicator(op.peer);
      args += fmt::format(
          ",\"collective\":\"{}\",\"bytes\":{:.6g},\"dim\":\"{}\",\"ranks\":{},\"peers\":[{}]",
          to_string(op.collective), op.amount, to_string(op.dim), members.size(),
          fmt::join(members.begin(),
                    members.begin() +
                        static_cast<std::ptrdiff_t>(std::min(members.size(), kMaxListedPeers)),
                    ","));
      break;
    }
    case OpKind::kSend:
    case OpKind::kRecv:
      args += fmt::format(",\"peer\":{},\"tag\":{},\"bytes\":{:.6g},\"dim\":\"{}\"", op.peer,
                          op.tag, op.amount, to_string(op.dim));
      break;
    case OpKind::kCopy:
      args += fmt::format(",\"bytes\":{:.6g}", op.amount);
      break;
  }
  return args;
}

// A time inside the slice [start, end] (seconds), in microseconds, so that Perfetto binds a
// flow event to that slice: just after its start, or its middle when it is very short.
double inside_us(const sim::OpTiming& t, double at_s) {
  const double start_us = std::max(t.start_s, at_s) * 1e6;
  const double end_us = t.end_s * 1e6;
  return std::min(start_us + 0.002, (start_us + end_us) / 2);
}

// Flow arrows ("s" -> "f", bound to the enclosing slices) for who waited on whom: each send to
// its recv, and the last member to arrive at a collective to every other member (they waited
// for it).
void write_flows(const EventGraph& graph, const sim::SimResult& result,
                 const std::function<void(const std::string&)>& emit) {
  const size_t streams = graph.streams().size();
  uint64_t next_id = 1;
  auto arrow = [&](const char* name, CommDim dim, OpId from, double from_us, OpId to,
                   double to_us) {
    const Op& a = graph.op(from);
    const Op& b = graph.op(to);
    emit(fmt::format(
        "{{\"name\":\"{}\",\"cat\":\"flow.{}\",\"ph\":\"s\",\"id\":{},\"pid\":{},\"tid\":{},"
        "\"ts\":{:.4f}}}",
        name, to_string(dim), next_id, a.rank, thread_of(a, streams), from_us));
    emit(fmt::format(
        "{{\"name\":\"{}\",\"cat\":\"flow.{}\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{},\"pid\":{},"
        "\"tid\":{},\"ts\":{:.4f}}}",
        name, to_string(dim), next_id, b.rank, thread_of(b, streams), to_us));
    ++next_id;
  };
  const std::vector<OpId> recv_of_send = match_sends_to_recvs(graph);
  std::vector<std::pair<uint64_t, OpId>> collectives;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.kind == OpKind::kCollective) {
      collectives.push_back({(static_cast<uint64_t>(op.peer) << 32) | op.tag, id});
    }
    const OpId recv = recv_of_send[id];
    if (recv == kNoOp || result.timing[id].end_s < 0 || result.timing[recv].end_s < 0) continue;
    const sim::OpTiming& r = result.timing[recv];
    arrow("send -> recv", op.dim, id, inside_us(result.timing[id], result.timing[id].start_s), recv,
          std::max(r.start_s * 1e6, r.end_s * 1e6 - 0.002));
  }
  std::sort(collectives.begin(), collectives.end());
  for (size_t first = 0; first < collectives.size();) {
    size_t end = first;
    OpId last = collectives[first].second;
    while (end < collectives.size() && collectives[end].first == collectives[first].first) {
      if (result.timing[collectives[end].second].start_s > result.timing[last].start_s) {
        last = collectives[end].second;
      }
      ++end;
    }
    const double arrival_s = result.timing[last].start_s;
    for (size_t i = first; i < end; ++i) {
      const OpId member = collectives[i].second;
      if (member == last) continue;
      arrow("last arrival", graph.op(last).dim, last, inside_us(result.timing[last], arrival_s),
            member, inside_us(result.timing[member], arrival_s));
    }
    first = end;
  }
}

// The process and thread names of the ranks in [0, ranks_shown).
void write_thread_names(const EventGraph& graph, RankId ranks_shown,
                        const std::function<void(const std::string&)>& emit) {
  const size_t streams = graph.streams().size();
  std::set<std::pair<RankId, uint32_t>> threads;
  for (const Op& op : graph.ops()) {
    if (op.rank < ranks_shown) threads.insert({op.rank, thread_of(op, streams)});
  }
  RankId last_rank = graph.num_ranks();
  for (const auto& [rank, tid] : threads) {
    if (rank != last_rank) {
      emit(fmt::format(
          "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":\"rank {}\"}}}}",
          rank, rank));
      emit(
          fmt::format("{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"sort_"
                      "index\":{}}}}}",
                      rank, rank));
      last_rank = rank;
    }
    const std::string name =
        tid < streams ? graph.streams()[tid].name : graph.streams()[tid - streams].name + ".recv";
    emit(fmt::format(
        "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}",
        rank, tid, quoted(name)));
  }
}

// A slice's start and duration in microseconds on the nanosecond grid the JSON prints (three
// decimals): rounding start and end, not start and duration, keeps back-to-back slices of a
// thread from overlapping by a rounding step.
std::pair<double, double> slice_us(double start_s, double end_s) {
  const double ts = std::round(start_s * 1e9) / 1e3;
  return {ts, std::round(end_s * 1e9) / 1e3 - ts};
}

void write_full(const EventGraph& graph, const sim::SimResult& result,
                const std::function<void(const std::string&)>& emit) {
  const size_t streams = graph.streams().size();
  write_thread_names(graph, graph.num_ranks(), emit);
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    const sim::OpTiming& t = result.timing[id];
    if (t.end_s < 0) continue;
    const auto [ts_us, dur_us] = slice_us(t.start_s, t.end_s);
    emit(fmt::format(
        "{{\"name\":{},\"cat\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{:.3f},\"dur\":{:."
        "3f},"
        "\"args\":{{\"op\":{},{}}}}}",
        quoted(graph.label(op.label)), to_string(op.phase), op.rank, thread_of(op, streams), ts_us,
        dur_us, id, op_args(graph, op)));
  }
  write_flows(graph, result, emit);
}

// One slice of a layer timeline: a run of operations of one thread.
struct LayerSlice {
  RankId rank = 0;
  uint32_t tid = 0;
  double start_s = 0, end_s = 0;
  OpId first = 0;
  size_t ops = 0;
  double flops = 0, bytes = 0;
};

bool same_slice(const Op& a, const Op& b) {
  return a.layer == b.layer && a.micro_batch == b.micro_batch && a.phase == b.phase &&
         (a.kind == OpKind::kCompute) == (b.kind == OpKind::kCompute);
}

std::vector<LayerSlice> layer_slices(const EventGraph& graph, const sim::SimResult& result) {
  const size_t streams = graph.streams().size();
  std::vector<OpId> order;
  for (OpId id = 0; id < graph.size(); ++id) {
    if (result.timing[id].end_s >= 0) order.push_back(id);
  }
  auto key = [&](OpId id) {
    const Op& op = graph.op(id);
    return std::make_tuple(op.rank, thread_of(op, streams), result.timing[id].start_s, id);
  };
  std::sort(order.begin(), order.end(), [&](OpId a, OpId b) { return key(a) < key(b); });
  std::vector<LayerSlice> slices;
  for (OpId id : order) {
    const Op& op = graph.op(id);
    const sim::OpTiming& t = result.timing[id];
    const uint32_t tid = thread_of(op, streams);
    LayerSlice* last = slices.empty() ? nullptr : &slices.back();
    const bool same_thread = last != nullptr && last->rank == op.rank && last->tid == tid;
    if (!same_thread || !same_slice(graph.op(last->first), op)) {
      // Slices of one thread must not overlap: start no earlier than the one before ends.
      const double start = same_thread ? std::max(t.start_s, last->end_s) : t.start_s;
      slices.push_back({op.rank, tid, start, std::max(start, t.end_s), id, 0, 0, 0});
      last = &slices.back();
    }
    last->end_s = std::max(last->end_s, t.end_s);
    ++last->ops;
    (op.kind == OpKind::kCompute ? last->flops : last->bytes) += op.amount;
  }
  return slices;
}

void write_layer_slices(const EventGraph& graph, const sim::SimResult& result,
                        const std::function<void(const std::string&)>& emit) {
  const std::vector<LayerSlice> slices = layer_slices(graph, result);
  // The ranks whose slices fit the budget (whole ranks, in order).
  RankId ranks_shown = graph.num_ranks();
  for (size_t i = 0; i < slices.size(); ++i) {
    if (i >= kLayerTimelineMaxEvents && slices[i].rank != slices[i - 1].rank) {
      ranks_shown = slices[i].rank;
      break;
    }
  }
  write_thread_names(graph, ranks_shown, emit);
  for (const LayerSlice& slice : slices) {
    if (slice.rank >= ranks_shown) break;
    const Op& op = graph.op(slice.first);
    const std::string name = op.layer >= 0
                                 ? fmt::format("layer {} {}", op.layer, to_string(op.phase))
                                 : graph.label(op.label);
    const auto [ts_us, dur_us] = slice_us(slice.start_s, slice.end_s);
    emit(fmt::format(
        "{{\"name\":{},\"cat\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{:.3f},"
        "\"dur\":{:.3f},\"args\":{{\"ops\":{},\"micro_batch\":{},\"layer\":{},\"flops\":{:.6g},"
        "\"bytes\":{:.6g}}}}}",
        quoted(name), to_string(op.phase), slice.rank, slice.tid, ts_us, dur_us, slice.ops,
        op.micro_batch, op.layer, slice.flops, slice.bytes));
  }
  if (ranks_shown < graph.num_ranks()) {
    emit(fmt::format(
        "{{\"name\":\"racksim_note\",\"ph\":\"M\",\"pid\":0,\"args\":{{\"name\":\"ranks {} .. {} "
        "left out to keep the timeline small; --timeline full shows every rank\"}}}}",
        ranks_shown, graph.num_ranks() - 1));
  }
}

}  // namespace

void write_timeline(const EventGraph& graph, const sim::SimResult& result, std::ostream& out,
                    TimelineDetail detail) {
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string& event) {
    out << (first ? "" : ",\n") << event;
    first = false;
  };
  if (detail == TimelineDetail::kFull) {
    write_full(graph, result, emit);
  } else {
    write_layer_slices(graph, result, emit);
  }
  out << "\n]}\n";
}

}  // namespace racksim::analysis
