// Where the step time of a rank went, read off its compute stream.
//
// The compute stream of a rank is either busy (a kernel runs) or idle. Busy time is split by
// phase: compute (forward and backward), recompute, optimizer. Idle time is charged to what the
// next kernel was waiting for (the dependency that released it):
//   - a collective or a send of dimension D: exposed communication of D (TP/CP/EP/PP/DP),
//     including the time spent waiting for the other members to arrive;
//   - a received activation or gradient: pipeline bubble until the sender started the
//     transfer, exposed PP communication while the data was on the wire;
//   - a host<->device copy: offload;
//   - anything else: other.
// The idle tail after the stream's last kernel goes to what the rank's other streams do then,
// the most telling first: the optimizer on the CPU, host<->device copies (offload), a
// collective of dimension D (e.g. the gradient reduction), and only then other.
// The entries add up to the step time exactly.
#pragma once

#include <array>
#include <map>
#include <vector>

#include "graph/event_graph.h"
#include "sim/engine.h"

namespace racksim::analysis {

struct Breakdown {
  RankId rank = 0;
  double step_time_s = 0;
  double compute_s = 0;
  double recompute_s = 0;
  double optimizer_s = 0;
  double bubble_s = 0;
  double offload_s = 0;
  double other_s = 0;
  std::array<double, kNumCommDims> exposed_comm_s{};  // indexed by CommDim
  // The part of exposed_comm_s charged to collectives, per communicator: which group the
  // exposure came from where the dimension does not say (a trace's unnamed groups).
  std::map<CommId, double> exposed_by_comm_s;
  // Host<->device copies of the rank (offload): how long some copy ran (the union of their
  // intervals) and the bytes each way; busy minus exposed (offload_s) is what compute hid.
  double copy_busy_s = 0;
  double copy_to_host_bytes = 0;
  double copy_to_device_bytes = 0;
  double offload_hidden_s() const { return copy_busy_s > offload_s ? copy_busy_s - offload_s : 0; }

  double exposed_comm(CommDim dim) const { return exposed_comm_s[static_cast<size_t>(dim)]; }
  double total_s() const;
};

// Why a compute stream sat idle during [from_s, to_s) before `op`, split the way the breakdown
// charges it: waiting for a collective or send (comm of its dimension), for a peer stage to
// start sending (bubble) and then for the transfer (comm), for a copy (offload), or other.
enum class WaitCause : uint8_t { kComm, kBubble, kOffload, kOther };
struct WaitPiece {
  WaitCause cause = WaitCause::kOther;
  CommDim dim = CommDim::kOther;
  double from_s = 0;
  double to_s = 0;
  OpId by = kNoOp;  // kComm: the collective or send waited for
};
std::vector<WaitPiece> wait_pieces(const EventGraph& graph, const sim::SimResult& result, OpId op,
                                   double from_s, double to_s);

// The breakdown of `rank` over [0, step_time_s].
Breakdown rank_breakdown(const EventGraph& graph, const sim::SimResult& result, RankId rank,
                         double step_time_s);

// When each rank's last operation ends (0 for a rank without operations).
std::vector<double> rank_end_times(const EventGraph& graph, const sim::SimResult& result);

// The rank whose last operation ends last (the lowest such rank on ties).
RankId critical_rank(const EventGraph& graph, const sim::SimResult& result);

}  // namespace racksim::analysis
