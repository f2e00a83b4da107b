// Cross-rank matching of an event graph's communication, checked before a replay so that a
// graph that cannot run is rejected with a message instead of a deadlock.
#pragma once

#include <vector>

#include "workloads/event_graph.h"

namespace racksim {

// For every send, the recv it delivers to (kNoOp for operations that are not sends).
// Sends and recvs are matched by (source, destination, tag) in issue order. Throws
// std::runtime_error naming the first unmatched send or recv, or a byte-count mismatch.
std::vector<OpId> match_sends_to_recvs(const EventGraph& graph);

// Checks that every collective instance (communicator, sequence number) is issued by every
// member of its communicator with the same kind and byte count. Throws std::runtime_error
// naming the first instance that is not.
void check_collectives(const EventGraph& graph);

}  // namespace racksim
