// SimGrid settings for GPU fabrics, applied to the current engine before the platform exists.
#pragma once

namespace racksim::topo {

// Selects the plain CM02 network model without cross-traffic and with an unlimited TCP window
// (no hidden latency or bandwidth factors: a flow gets exactly its max-min share of the links'
// bandwidth after the routes' latency), and silences SimGrid's logs below critical.
// Call it after the s4u::Engine is constructed and before build_platform.
void configure_engine_for_gpus();

}  // namespace racksim::topo
