#include "analysis/critical_path.h"

#include <cmath>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "graph/graph_check.h"

namespace racksim::analysis {

namespace {

PathKind kind_of(const Op& op) {
  switch (op.kind) {
    case OpKind::kCollective:
    case OpKind::kSend:
    case OpKind::kRecv:
      return PathKind::kComm;
    case OpKind::kCopy:
      return PathKind::kOffload;
    case OpKind::kCompute:
      break;
  }
  switch (op.phase) {
    case Phase::kForward:
      return PathKind::kForward;
    case Phase::kBackward:
      return PathKind::kBackward;
    case Phase::kBackwardWeight:
      return PathKind::kBackwardWeight;
    case Phase::kRecompute:
      return PathKind::kRecompute;
    case Phase::kOptimizer:
      return PathKind::kOptimizer;
    case Phase::kOther:
      break;
  }
  return PathKind::kOtherCompute;
}

// Everything the walk needs to look up besides the graph and the timings.
struct WalkIndex {
  std::vector<OpId> stream_predecessor;  // previous op on the same (rank, stream); recvs: none
  std::vector<OpId> send_of_recv;
  // (communicator << 32 | sequence, op) for every collective, sorted: the members of one instance.
  std::vector<std::pair<uint64_t, OpId>> collectives;
};

uint64_t instance_key(const Op& op) {
  return (static_cast<uint64_t>(op.peer) << 32) | op.tag;
}

WalkIndex build_index(const EventGraph& graph) {
  WalkIndex index;
  const size_t n = graph.size();
  const size_t streams = graph.streams().size();
  index.stream_predecessor.assign(n, kNoOp);
  std::vector<OpId> last(static_cast<size_t>(graph.num_ranks()) * streams, kNoOp);
  for (OpId id = 0; id < n; ++id) {
    const Op& op = graph.op(id);
    if (op.kind == OpKind::kCollective) index.collectives.push_back({instance_key(op), id});
    if (op.kind == OpKind::kRecv) continue;  // passive: not walked by its stream
    OpId& slot = last[op.rank * streams + op.stream];
    index.stream_predecessor[id] = slot;
    slot = id;
  }
  std::sort(index.collectives.begin(), index.collectives.end());
  index.send_of_recv.assign(n, kNoOp);
  const std::vector<OpId> recv_of_send = match_sends_to_recvs(graph);
  for (OpId id = 0; id < n; ++id) {
    if (recv_of_send[id] != kNoOp) index.send_of_recv[recv_of_send[id]] = id;
  }
  return index;
}

// The member of `op`'s collective instance that arrived last (the lowest rank on ties).
OpId last_arrival(const EventGraph& graph, const sim::SimResult& result, const WalkIndex& index,
                  OpId op) {
  const uint64_t key = instance_key(graph.op(op));
  auto it = std::lower_bound(index.collectives.begin(), index.collectives.end(),
                             std::pair<uint64_t, OpId>{key, 0});
  OpId latest = op;
  for (; it != index.collectives.end() && it->first == key; ++it) {
    if (result.timing[it->second].start_s > result.timing[latest].start_s) latest = it->second;
  }
  return latest;
}

// Of what `op` waited for, the one that finished last (kNoOp when it waited for nothing).
OpId latest_predecessor(const sim::SimResult& result, const WalkIndex& index, OpId op) {
  const OpId a = result.released_by[op];
  const OpId b = index.stream_predecessor[op];
  if (a == kNoOp) return b;
  if (b == kNoOp) return a;
  return result.timing[b].end_s > result.timing[a].end_s ? b : a;
}

class Walker {
 public:
  Walker(const EventGraph& graph, const sim::SimResult& result)
      : graph_(graph), result_(result), index_(build_index(graph)) {}

  CriticalPath walk() {
    OpId current = last_op();
    double t = current == kNoOp ? 0 : result_.timing[current].end_s;
    path_.length_s = t;
    size_t steps = 0;
    while (current != kNoOp) {
      if (++steps > 4 * graph_.size() + 16) {
        throw std::logic_error("critical path: the walk does not terminate");
      }
      current = step(current, &t);
    }
    if (t > 0) charge_wait(path_.segments.empty() ? 0 : path_.segments.back().rank, 0, t);
    std::reverse(path_.segments.begin(), path_.segments.end());
    summarise();
    return std::move(path_);
  }

 private:
  OpId last_op() const {
    OpId best = kNoOp;
    for (OpId id = 0; id < graph_.size(); ++id) {
      if (best == kNoOp || result_.timing[id].end_s > result_.timing[best].end_s) best = id;
    }
    return best;
  }

  // Charges `op`'s stretch of the path ending at *t, moves *t to its start, and returns the
  // operation the path continues at.
  OpId step(OpId op, double* t) {
    const Op& o = graph_.op(op);
    OpId origin = op;  // whose predecessors come next
    double start = result_.timing[op].start_s;
    if (o.kind == OpKind::kCollective) {
      origin = last_arrival(graph_, result_, index_, op);
      start = result_.timing[origin].start_s;
    } else if (o.kind == OpKind::kRecv && index_.send_of_recv[op] != kNoOp &&
               result_.released_by[op] == index_.send_of_recv[op]) {
      origin = index_.send_of_recv[op];  // the transfer is charged once, here
    }
    start = std::min(start, *t);
    charge(op, o, start, *t);
    *t = start;
    const OpId next = latest_predecessor(result_, index_, origin);
    if (next == kNoOp) return kNoOp;
    const double next_end = std::min(result_.timing[next].end_s, *t);
    if (next_end < *t) charge_wait(o.rank, next_end, *t);
    *t = next_end;
    return next;
  }

  void charge(OpId op, const Op& o, double from, double to) {
    if (to <= from) return;
    path_.segments.push_back({op, o.rank, from, to, kind_of(o), o.dim});
  }

  void charge_wait(RankId rank, double from, double to) {
    if (to <= from) return;
    path_.segments.push_back({kNoOp, rank, from, to, PathKind::kWait, CommDim::kOther});
  }

  void summarise() {
    path_.by_rank_s.assign(graph_.num_ranks(), 0);
    for (size_t i = 0; i < path_.segments.size(); ++i) {
      const PathSegment& s = path_.segments[i];
      path_.by_kind_s[static_cast<size_t>(s.kind)] += s.seconds();
      if (s.kind == PathKind::kComm) path_.comm_by_dim_s[static_cast<size_t>(s.dim)] += s.seconds();
      path_.by_rank_s[s.rank] += s.seconds();
      if (i > 0 && path_.segments[i - 1].rank != s.rank) ++path_.rank_changes;
    }
  }

  const EventGraph& graph_;
  const sim::SimResult& result_;
  WalkIndex index_;
  CriticalPath path_;
};

}  // namespace

std::string_view to_string(PathKind kind) {
  switch (kind) {
    case PathKind::kForward:
      return "forward";
    case PathKind::kBackward:
      return "backward";
    case PathKind::kBackwardWeight:
      return "backward_weight";
    case PathKind::kRecompute:
      return "recompute";
    case PathKind::kOptimizer:
      return "optimizer";
    case PathKind::kOtherCompute:
      return "other_compute";
    case PathKind::kComm:
      return "comm";
    case PathKind::kOffload:
      return "offload";
    case PathKind::kWait:
      return "wait";
  }
  return "?";
}

CriticalPath critical_path(const EventGraph& graph, const sim::SimResult& result) {
  if (result.timing.size() != graph.size() || result.released_by.size() != graph.size()) {
    throw std::invalid_argument("critical path: the result does not belong to the graph");
  }
  return Walker(graph, result).walk();
}

std::vector<PathOperation> top_path_operations(const EventGraph& graph, const CriticalPath& path,
                                               size_t limit) {
  std::map<std::tuple<std::string, PathKind, CommDim>, PathOperation> groups;
  for (const PathSegment& s : path.segments) {
    const std::string label = s.op == kNoOp ? "(waiting)" : graph.label(graph.op(s.op).label);
    PathOperation& g = groups[{label, s.kind, s.dim}];
    g.label = label;
    g.kind = s.kind;
    g.dim = s.dim;
    g.seconds += s.seconds();
    ++g.count;
  }
  std::vector<PathOperation> ops;
  for (auto& [key, g] : groups) ops.push_back(std::move(g));
  std::stable_sort(ops.begin(), ops.end(), longer_on_path);
  if (ops.size() > limit) ops.resize(limit);
  return ops;
}

bool longer_on_path(const PathOperation& a, const PathOperation& b) {
  return std::llround(a.seconds * 1e9) > std::llround(b.seconds * 1e9);
}

}  // namespace racksim::analysis
