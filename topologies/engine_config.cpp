#include "topologies/engine_config.h"

#include <xbt/log.h>
#include <simgrid/s4u/Engine.hpp>

namespace racksim::topo {

void configure_engine_for_gpus() {
  // First, so that the configuration changes below are not logged either.
  xbt_log_control_set("root.thresh:critical");
  // The "key:value" spelling matters: set_config(key, "literal") picks the bool overload.
  simgrid::s4u::Engine::set_config("network/model:CM02");
  // By default a flow also loads the reverse direction of its links by 5% (TCP acks).
  simgrid::s4u::Engine::set_config("network/crosstraffic:0");
  // The default TCP window caps each flow at gamma / (2 x route latency), which would throttle
  // NVLink-class links on routes of a few microseconds.
  simgrid::s4u::Engine::set_config("network/TCP-gamma:1e15");
}

}  // namespace racksim::topo
