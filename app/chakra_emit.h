// `racksim run --emit-chakra DIR`: the simulated step's event graph written as a Chakra trace,
// DIR/trace.<rank>.et (traces/chakra_writer.h), with DIR/trace.comm_groups.json, the
// process groups as ASTRA-sim's --comm-group-configuration reads them. Compute ops carry the
// compute model's duration for tools that need one; racksim's reader times them again.
#pragma once

#include "app/output_dir.h"
#include "graph/event_graph.h"
#include "sim/compute_model.h"

namespace racksim::app {

inline constexpr const char* kChakraTraceName = "trace";

// `compute`: the model that timed the step, whose durations the trace records.
void emit_chakra(const EventGraph& graph, const sim::ComputeModel& compute, OutputDir& dir);

}  // namespace racksim::app
