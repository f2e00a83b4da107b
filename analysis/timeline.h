// The simulated step as a Chrome trace-event file (timeline.json) that Perfetto and
// chrome://tracing open: one process per rank, one thread per stream, one complete ("X") event
// per operation with its layer, micro-batch, FLOPs, bytes, collective kind and peers, and flow
// arrows (send -> recv; a collective's last member to arrive -> each member that waited for it)
// so that Perfetto shows who waited on whom.
#pragma once

#include <ostream>

#include "graph/event_graph.h"
#include "sim/engine.h"

namespace racksim::analysis {

// How much of the step a timeline shows.
enum class TimelineDetail {
  // Every operation and the flow arrows: gigabytes for a large cluster.
  kFull,
  // Per rank and stream, one slice per run of operations of the same layer, micro-batch and
  // phase (their FLOPs and bytes summed, their count in args.ops), no arrows; ranks past
  // kLayerTimelineMaxEvents slices are left out (a metadata event says how many), so that the
  // file stays near 100 MB however large the cluster.
  kLayers,
};

constexpr size_t kLayerTimelineMaxEvents = 500000;

void write_timeline(const EventGraph& graph, const sim::SimResult& result, std::ostream& out,
                    TimelineDetail detail = TimelineDetail::kFull);

}  // namespace racksim::analysis
