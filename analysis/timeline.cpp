#include "analysis/timeline.h"

#include <set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace racksim::analysis {

namespace {

// Passive recvs overlap the sends of their stream, and events of one thread must nest, so
// recvs get a thread of their own.
uint32_t thread_of(const Op& op, size_t streams) {
  return op.kind == OpKind::kRecv ? static_cast<uint32_t>(streams + op.stream) : op.stream;
}

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
      args += fmt::format(",\"collective\":\"{}\",\"bytes\":{:.6g},\"dim\":\"{}\",\"ranks\":{}",
                          to_string(op.collective), op.amount, to_string(op.dim), members.size());
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

}  // namespace

void write_timeline(const EventGraph& graph, const sim::SimResult& result, std::ostream& out) {
  const size_t streams = graph.streams().size();
  std::set<std::pair<RankId, uint32_t>> threads;
  for (const Op& op : graph.ops()) threads.insert({op.rank, thread_of(op, streams)});
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string& event) {
    out << (first ? "" : ",\n") << event;
    first = false;
  };
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
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    const sim::OpTiming& t = result.timing[id];
    if (t.end_s < 0) continue;
    emit(fmt::format(
        "{{\"name\":{},\"cat\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{:.3f},\"dur\":{:."
        "3f},"
        "\"args\":{{\"op\":{},{}}}}}",
        quoted(graph.label(op.label)), to_string(op.phase), op.rank, thread_of(op, streams),
        t.start_s * 1e6, (t.end_s - t.start_s) * 1e6, id, op_args(graph, op)));
  }
  out << "\n]}\n";
}

}  // namespace racksim::analysis
