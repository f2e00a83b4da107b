#include "analysis/breakdown.h"

#include <algorithm>

namespace racksim::analysis {

namespace {

double& comm_slot(Breakdown& b, CommDim dim) {
  return b.exposed_comm_s[static_cast<size_t>(dim)];
}

// Exposed communication of dimension `dim` caused by `by`; a collective's is also charged to
// its communicator.
void add_comm(Breakdown& b, const EventGraph& graph, CommDim dim, OpId by, double seconds) {
  comm_slot(b, dim) += seconds;
  if (by != kNoOp && graph.op(by).kind == OpKind::kCollective) {
    b.exposed_by_comm_s[graph.op(by).peer] += seconds;
  }
}

void add_busy(Breakdown& b, Phase phase, double seconds) {
  switch (phase) {
    case Phase::kForward:
    case Phase::kBackward:
    case Phase::kBackwardWeight:
      b.compute_s += seconds;
      break;
    case Phase::kRecompute:
      b.recompute_s += seconds;
      break;
    case Phase::kOptimizer:
      b.optimizer_s += seconds;
      break;
    case Phase::kOther:
      b.other_s += seconds;
      break;
  }
}

// Charges the idle interval [from, to) before `op` to what released `op`.
void add_idle(Breakdown& b, const EventGraph& graph, const sim::SimResult& result, OpId op,
              double from, double to) {
  for (const WaitPiece& piece : wait_pieces(graph, result, op, from, to)) {
    const double seconds = piece.to_s - piece.from_s;
    switch (piece.cause) {
      case WaitCause::kComm:
        add_comm(b, graph, piece.dim, piece.by, seconds);
        break;
      case WaitCause::kBubble:
        b.bubble_s += seconds;
        break;
      case WaitCause::kOffload:
        b.offload_s += seconds;
        break;
      case WaitCause::kOther:
        b.other_s += seconds;
        break;
    }
  }
}

// What a rank's other streams were doing while its compute stream had finished: the tail of the
// step (gradient reduction, copies to and from the host, the optimizer on the CPU).
enum class TailCause : uint8_t { kOther, kComm, kOffload, kOptimizer };  // by priority

struct TailSegment {
  double from_s = 0;
  double to_s = 0;
  TailCause cause = TailCause::kOther;
  CommDim dim = CommDim::kOther;
  OpId op = kNoOp;
};

TailSegment tail_segment(const EventGraph& graph, const sim::SimResult& result, OpId id) {
  const Op& op = graph.op(id);
  TailSegment seg{result.timing[id].start_s, result.timing[id].end_s, TailCause::kOther, op.dim,
                  id};
  if (op.phase == Phase::kOptimizer && op.kind == OpKind::kCompute) {
    seg.cause = TailCause::kOptimizer;
  } else if (op.kind == OpKind::kCopy) {
    seg.cause = TailCause::kOffload;
  } else if (op.kind != OpKind::kCompute) {
    seg.cause = TailCause::kComm;
  }
  return seg;
}

// Charges [from, to) to the most telling activity of the rank's other streams at each moment.
// `side_ops`: the rank's operations on its other streams.
void add_tail(Breakdown& b, const EventGraph& graph, const sim::SimResult& result,
              const std::vector<OpId>& side_ops, double from, double to) {
  std::vector<TailSegment> segments;
  std::vector<double> cuts{from, to};
  for (OpId id : side_ops) {
    TailSegment seg = tail_segment(graph, result, id);
    seg.from_s = std::max(seg.from_s, from);
    seg.to_s = std::min(seg.to_s, to);
    if (seg.to_s <= seg.from_s || seg.cause == TailCause::kOther) continue;
    segments.push_back(seg);
    cuts.push_back(seg.from_s);
    cuts.push_back(seg.to_s);
  }
  std::sort(cuts.begin(), cuts.end());
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double lo = cuts[i], hi = cuts[i + 1];
    if (hi <= lo) continue;
    const TailSegment* best = nullptr;
    for (const TailSegment& seg : segments) {
      if (seg.from_s <= lo && seg.to_s >= hi && (best == nullptr || seg.cause > best->cause)) {
        best = &seg;
      }
    }
    const TailCause cause = best == nullptr ? TailCause::kOther : best->cause;
    switch (cause) {
      case TailCause::kOptimizer:
        b.optimizer_s += hi - lo;
        break;
      case TailCause::kOffload:
        b.offload_s += hi - lo;
        break;
      case TailCause::kComm:
        add_comm(b, graph, best->dim, best->op, hi - lo);
        break;
      case TailCause::kOther:
        b.other_s += hi - lo;
        break;
    }
  }
}

// The rank's host<->device copies: bytes each way and the union of their running intervals.
void add_copies(Breakdown& b, const EventGraph& graph, const sim::SimResult& result,
                const std::vector<OpId>& copies) {
  std::vector<std::pair<double, double>> spans;
  for (OpId id : copies) {
    const Op& op = graph.op(id);
    (op.copy_direction == CopyDirection::kDeviceToHost ? b.copy_to_host_bytes
                                                       : b.copy_to_device_bytes) += op.amount;
    spans.emplace_back(result.timing[id].start_s, result.timing[id].end_s);
  }
  std::sort(spans.begin(), spans.end());
  double covered_to = -1;
  for (const auto& [from, to] : spans) {
    const double start = std::max(from, covered_to);
    if (to > start) b.copy_busy_s += to - start;
    covered_to = std::max(covered_to, to);
  }
}

}  // namespace

std::vector<WaitPiece> wait_pieces(const EventGraph& graph, const sim::SimResult& result, OpId op,
                                   double from, double to) {
  const OpId blocker = result.released_by[op];
  if (blocker == kNoOp || result.timing[blocker].end_s <= from) {
    return {{WaitCause::kOther, CommDim::kOther, from, to}};
  }
  const Op& dep = graph.op(blocker);
  switch (dep.kind) {
    case OpKind::kCollective:
    case OpKind::kSend:
      return {{WaitCause::kComm, dep.dim, from, to, blocker}};
    case OpKind::kRecv: {
      // Until the peer started sending, this rank waited for the peer's work: the bubble.
      const double transfer_start = std::clamp(result.timing[blocker].start_s, from, to);
      return {{WaitCause::kBubble, dep.dim, from, transfer_start},
              {WaitCause::kComm, dep.dim, transfer_start, to, blocker}};
    }
    case OpKind::kCopy:
      return {{WaitCause::kOffload, CommDim::kOther, from, to}};
    case OpKind::kCompute:
      break;
  }
  return {{WaitCause::kOther, CommDim::kOther, from, to}};
}

double Breakdown::total_s() const {
  double total = compute_s + recompute_s + optimizer_s + bubble_s + offload_s + other_s;
  for (double c : exposed_comm_s) total += c;
  return total;
}

Breakdown rank_breakdown(const EventGraph& graph, const sim::SimResult& result, RankId rank,
                         double step_time_s) {
  Breakdown b;
  b.rank = rank;
  b.step_time_s = step_time_s;
  double cursor = 0;
  std::vector<OpId> compute_ops;  // the rank's operations on its compute streams
  std::vector<OpId> side_ops;     // on its other streams
  std::vector<OpId> copies;       // its host<->device copies
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.rank != rank) continue;
    if (op.kind == OpKind::kCopy) copies.push_back(id);
    (graph.streams()[op.stream].kind == StreamKind::kCompute ? compute_ops : side_ops)
        .push_back(id);
  }
  // By start time: with several compute streams (a Kineto trace's CUDA streams) a kernel issued
  // later may start earlier; the walk counts each moment once, busy if any kernel runs.
  std::stable_sort(compute_ops.begin(), compute_ops.end(), [&](OpId a, OpId b) {
    return result.timing[a].start_s < result.timing[b].start_s;
  });
  for (OpId id : compute_ops) {
    const Op& op = graph.op(id);
    const sim::OpTiming& t = result.timing[id];
    if (t.start_s > cursor) add_idle(b, graph, result, id, cursor, t.start_s);
    const double busy_from = std::max(cursor, t.start_s);
    if (t.end_s > busy_from) add_busy(b, op.phase, t.end_s - busy_from);
    cursor = std::max(cursor, t.end_s);
  }
  if (step_time_s > cursor) add_tail(b, graph, result, side_ops, cursor, step_time_s);
  add_copies(b, graph, result, copies);
  return b;
}

std::vector<double> rank_end_times(const EventGraph& graph, const sim::SimResult& result) {
  std::vector<double> end(graph.num_ranks(), 0);
  for (OpId id = 0; id < graph.size(); ++id) {
    RankId r = graph.op(id).rank;
    end[r] = std::max(end[r], result.timing[id].end_s);
  }
  return end;
}

RankId critical_rank(const EventGraph& graph, const sim::SimResult& result) {
  const std::vector<double> end = rank_end_times(graph, result);
  return static_cast<RankId>(std::max_element(end.begin(), end.end()) - end.begin());
}

}  // namespace racksim::analysis
