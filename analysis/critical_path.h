// The critical path of a simulated step: the chain of operations, across ranks, that decided
// when the step ended.
//
// The walk starts at the operation that ends last and goes back in time. At each operation it
// charges the interval that operation occupied on the path, then moves to what the operation
// waited for: the later of the dependency that released it (SimResult::released_by) and the
// operation before it on the same (rank, stream). Communication moves across ranks: a recv
// continues at the matched send (the sender's work is on the path, the transfer is charged once),
// and a collective continues at its last member to arrive (the collective ran from that arrival
// to its end; the members that arrived earlier only waited). Time between an operation's start
// and the end of what it waited for that no operation explains is charged as `wait`. The
// segments tile [0, step time] exactly.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "graph/event_graph.h"
#include "sim/engine.h"

namespace racksim::analysis {

// What a stretch of the critical path was.
enum class PathKind : uint8_t {
  kForward,
  kBackward,
  kBackwardWeight,
  kRecompute,
  kOptimizer,
  kOtherCompute,
  kComm,     // a collective or a point-to-point transfer (see PathSegment::dim)
  kOffload,  // a host<->device copy
  kWait,     // nothing on the path ran (e.g. before the first operation)
};

inline constexpr int kNumPathKinds = 9;

std::string_view to_string(PathKind kind);

struct PathSegment {
  OpId op = kNoOp;  // kNoOp for kWait
  RankId rank = 0;
  double start_s = 0;
  double end_s = 0;
  PathKind kind = PathKind::kWait;
  CommDim dim = CommDim::kOther;  // for kComm
  double seconds() const { return end_s - start_s; }
};

struct CriticalPath {
  std::vector<PathSegment> segments;  // in time order, from 0 to the step's end
  double length_s = 0;
  std::array<double, kNumPathKinds> by_kind_s{};     // indexed by PathKind
  std::array<double, kNumCommDims> comm_by_dim_s{};  // the kComm seconds by CommDim
  std::vector<double> by_rank_s;                     // seconds on each rank
  uint32_t rank_changes = 0;  // how often the path moves from one rank to another

  double seconds(PathKind kind) const { return by_kind_s[static_cast<size_t>(kind)]; }
  double comm_seconds(CommDim dim) const { return comm_by_dim_s[static_cast<size_t>(dim)]; }
};

// The critical path of a completed simulation of `graph`.
CriticalPath critical_path(const EventGraph& graph, const sim::SimResult& result);

// The operations that took most of the path, grouped by label and kind (e.g. "attention
// backward": 0.31 s over 64 operations), longest first.
struct PathOperation {
  std::string label;
  PathKind kind = PathKind::kWait;
  CommDim dim = CommDim::kOther;
  double seconds = 0;
  uint32_t count = 0;
};
std::vector<PathOperation> top_path_operations(const EventGraph& graph, const CriticalPath& path,
                                               size_t limit);

// The order of that list: longer first, to the nanosecond, so that groups of equal length keep
// their label order whatever the rounding of their sums.
bool longer_on_path(const PathOperation& a, const PathOperation& b);

}  // namespace racksim::analysis
