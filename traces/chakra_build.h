// Turns the ranks' Chakra node tables into racksim's event graph (graph/event_graph.h),
// the same graph a generator builds, so the engine never knows which produced it.
//
// What each node becomes:
//   COMP_NODE       compute op on the "compute" stream (is_cpu_op: on the "cpu" host stream,
//                   which takes time without occupying the GPU); FLOPs = num_ops, HBM bytes =
//                   tensor_size; timed by its recorded duration_micros, or by the compute
//                   model (ComputeSource).
//   MEM_LOAD/STORE  an HBM-bound compute op moving tensor_size bytes (racksim's own
//                   host<->device copies come back as copies).
//   COMM_COLL_NODE  a collective on the stream "comm.<pg_name>" ("comm" without pg_name); the
//                   communicator is the process group's members: racksim's metadata when it
//                   wrote the file, else the ranks whose traces use that pg_name, else all
//                   ranks. is_cpu_op collectives (the host side of a c10d call) are host ops.
//   COMM_SEND/RECV  send/recv with the peer from comm_dst/comm_src and the tag from comm_tag,
//                   on "comm.<pg_name>" or "comm.p2p". Sends and recvs match across ranks by
//                   (source, destination, tag, size) in issue order.
//   METADATA, INVALID and unknown types: no op; what depends on them waits for their
//                   dependencies.
// Each rank's nodes are added in a topological order (traces/chakra_order.h), ranks
// interleaved by node id, so a trace racksim wrote comes back as the identical graph.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/event_graph.h"
#include "traces/chakra_trace.h"

namespace racksim::chakra {

// How GPU compute nodes are timed.
enum class ComputeSource : uint8_t {
  kRecorded,  // duration_micros as recorded; the compute model only for nodes without one
  kModel,     // the compute model from num_ops / tensor_size; recorded only for nodes without
};

// A communicator of the trace: a process group, or every rank.
struct ProcessGroup {
  std::string name;  // pg_name, or the ranks without one ("group[8 ranks: 0,1,..,7]")
  CommDim dim = CommDim::kOther;
  CommId comm = 0;
};

struct TraceSummary {
  uint64_t nodes = 0;
  std::array<uint64_t, 8> by_type{};  // per ChakraProtoMsg::NodeType
  uint64_t unknown_type = 0;          // INVALID or undefined types (no-ops)
  uint64_t cpu_ops = 0;               // on the host stream
  uint64_t dangling_deps = 0;         // data_deps on ids not in their file (ignored)
  uint64_t ctrl_deps = 0;             // call-tree edges (not scheduling edges)
  uint64_t ctrl_dangling = 0;         // of which to ids not in their file
  uint64_t timed_recorded = 0;        // GPU compute ops replaying their recorded duration
  uint64_t timed_model = 0;           // GPU compute ops timed by the compute model
  uint64_t memory_ops = 0;            // MEM_LOAD/STORE nodes replayed as HBM-bound compute
  uint64_t retagged = 0;              // sends/recvs whose tag was split by message size
  uint64_t missing_comm_fields = 0;   // collectives without comm_type or comm_size
  double num_ops = 0;                 // sum of num_ops over the GPU compute ops
  bool racksim_metadata = false;      // the files carry racksim's streams and communicators
};

struct ChakraTrace {
  EventGraph graph;
  std::vector<std::string> files;  // per rank
  std::vector<uint64_t> node_id;   // per op: its node id in files[op.rank]
  std::vector<ProcessGroup> groups;
  TraceSummary summary;
  std::vector<std::string> warnings;
  ComputeSource compute = ComputeSource::kRecorded;
};

// Builds the event graph. Throws InputError (naming the file and node ids) for what cannot
// be replayed: cycles, peers outside the trace, sends or recvs without a partner,
// collectives that the members of a communicator do not all issue alike.
ChakraTrace build_trace_graph(const std::vector<RankTable>& tables, const Interner& names,
                              ComputeSource compute, std::vector<std::string> warnings);

// The parallel dimension a process-group name says it is ("tp", "tensor_parallel", "dp",
// "pipeline", ...), else kOther.
CommDim dim_of_group_name(std::string_view name);

}  // namespace racksim::chakra
