// Writing an event graph as a Chakra trace: one `<prefix>.<rank>.et` file per rank that
// racksim's reader reads back to the identical graph, and that Chakra and ASTRA-sim read as an
// ordinary trace:
//   compute    COMP_NODE with num_ops, tensor_size and duration_micros (the recorded duration,
//              or, for ops racksim times with its compute model, the model's estimate so that
//              other tools have one);
//   collective COMM_COLL_NODE with comm_type, comm_size (for an all-gather, what each rank
//              contributes, as ASTRA-sim reads it) and pg_name (the communicator's id; the
//              members are in comm_groups_json(), ASTRA-sim's --comm-group-configuration);
//   send/recv  COMM_SEND_NODE / COMM_RECV_NODE with comm_src, comm_dst, comm_tag, comm_size;
//   copy       MEM_LOAD_NODE (host to device) / MEM_STORE_NODE (device to host), tensor_size.
// Node ids are the graph's op ids, data_deps its dependencies. What Chakra has no field for
// (stream, phase, layer, micro-batch, op class, dtype, dimension, communicator, exact values)
// goes into racksim_* attributes (traces/chakra_trace.h), which other readers ignore.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "graph/event_graph.h"

namespace racksim::chakra {

struct WriteOptions {
  // The duration to write as duration_micros for ops without a recorded one (duration_s < 0),
  // e.g. the compute model's; when empty, such ops get none.
  std::function<double(const Op&)> modelled_duration_s;
};

class ChakraWriter {
 public:
  ChakraWriter(const EventGraph& graph, WriteOptions options);

  // The GlobalMetadata and the nodes of `rank`, in op order.
  void write_rank(RankId rank, std::ostream& out) const;

  // {"<pg_name>": [ranks], ...} for every communicator (ASTRA-sim's comm group file).
  std::string comm_groups_json() const;

 private:
  const EventGraph& graph_;
  WriteOptions options_;
  std::vector<std::vector<OpId>> ops_of_rank_;
  std::vector<std::vector<CommId>> comms_of_rank_;
};

// "<prefix>.<rank>.et"
std::string rank_file_name(const std::string& prefix, RankId rank);

}  // namespace racksim::chakra
