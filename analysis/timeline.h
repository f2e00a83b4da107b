// The simulated step as a Chrome trace-event file (timeline.json) that Perfetto and
// chrome://tracing open: one process per rank, one thread per stream, one complete ("X") event
// per operation with its layer, micro-batch, FLOPs, bytes, collective kind and peers, and flow
// arrows (send -> recv; a collective's last member to arrive -> each member that waited for it)
// so that Perfetto shows who waited on whom.
#pragma once

#include <ostream>

#include "sim/engine.h"
#include "workloads/event_graph.h"

namespace racksim::analysis {

void write_timeline(const EventGraph& graph, const sim::SimResult& result, std::ostream& out);

}  // namespace racksim::analysis
