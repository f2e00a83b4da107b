// Cross-rank matching of an event graph's communication, checked before a replay so that a
// graph that cannot run is rejected with a message instead of a deadlock.
#pragma once

#include <utility>
#include <vector>

#include "graph/event_graph.h"

namespace racksim {

// Every send paired with the recv of the same (source, destination, tag) in issue order, and
// what did not pair up, without throwing (trace readers report all of it with file and node).
struct PointToPointMatch {
  std::vector<OpId> recv_of_send;  // per operation; kNoOp for non-sends and unmatched sends
  std::vector<OpId> unmatched;     // sends and recvs left without a partner, in op order
  std::vector<std::pair<OpId, OpId>> size_mismatches;  // (send, recv) paired, bytes differ
};
PointToPointMatch match_point_to_point(const EventGraph& graph);

// A collective instance (communicator, sequence number) that cannot run: `other` issues it
// with another kind or byte count than `first`, or (other == kNoOp) only `issued` of the
// communicator's members issue it.
struct CollectiveProblem {
  OpId first = kNoOp;
  OpId other = kNoOp;
  uint32_t issued = 0;
  size_t members = 0;
};
std::vector<CollectiveProblem> collective_problems(const EventGraph& graph);

// For every send, the recv it delivers to (kNoOp for operations that are not sends).
// Sends and recvs are matched by (source, destination, tag) in issue order. Throws
// std::runtime_error naming the first unmatched send or recv, or a byte-count mismatch.
std::vector<OpId> match_sends_to_recvs(const EventGraph& graph);

// Checks that every collective instance (communicator, sequence number) is issued by every
// member of its communicator with the same kind and byte count. Throws std::runtime_error
// naming the first instance that is not.
void check_collectives(const EventGraph& graph);

}  // namespace racksim
