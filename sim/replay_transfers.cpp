// The replay's point-to-point transfers: a send to its matched receive, and a host <-> device
// copy. Each is one SimGrid flow on the route between the two hosts (sim/replay.h).
#include <algorithm>
#include <cmath>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "sim/replay.h"

namespace racksim::sim {

namespace s4u = simgrid::s4u;

void Replay::execute_send(OpId op) {
  const Op& o = graph_.op(op);
  const OpId recv = matched_recv_[op];
  timing_[recv].start_s = s4u::Engine::get_clock();
  s4u::Host* from = placement_.host[o.rank];
  s4u::Host* to = placement_.host[o.peer];
  const uint64_t bytes = whole_bytes(o.amount);
  if (bytes == 0 || from == to) return;  // same GPU: nothing crosses a link
  ++activities_;
  ++flows_;
  const double start = s4u::Engine::get_clock();
  const auto* hops = link_activity_ ? &fabric_.route(o.rank, o.peer) : nullptr;
  if (hops) link_activity_->add_flow(*hops, +1);
  s4u::Comm::sendto_async(from, to, bytes)->wait();
  if (hops) link_activity_->add_flow(*hops, -1);
  flow_log_.record(o.rank, o.peer, static_cast<double>(bytes), start, s4u::Engine::get_clock());
}

// A host <-> device copy: one flow between the rank's GPU and the CPU socket of the op's NUMA
// node (Op::peer, a socket of the rank's own server), over the GPU's PCIe path (or C2C) and,
// for the other socket's memory, the inter-socket link.
void Replay::execute_copy(OpId op) {
  const Op& o = graph_.op(op);
  s4u::Host* gpu = placement_.host[o.rank];
  s4u::Host* cpu = placement_.numa_hosts[o.rank][o.peer];
  const uint64_t bytes = whole_bytes(o.amount);
  if (bytes == 0) return;
  ++activities_;
  ++flows_;
  const bool to_device = o.copy_direction == CopyDirection::kHostToDevice;
  const auto* hops = link_activity_ ? &fabric_.copy_route(o.rank, o.peer) : nullptr;
  if (hops) link_activity_->add_flow(*hops, +1);
  s4u::Comm::sendto_async(to_device ? cpu : gpu, to_device ? gpu : cpu, bytes)->wait();
  if (hops) link_activity_->add_flow(*hops, -1);
}

}  // namespace racksim::sim
