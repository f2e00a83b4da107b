// Chakra's JSON variant of the trace (the format of Chakra's JSON feeder, e.g.
// chakra_small_json_feeder_sample.0.json): {"workload_graph": [{"Id", "Name", "NodeType",
// "data_deps", "ctrl_deps" (or "ctrlDeps"), "runtime" (microseconds), "is_cpu_op",
// "num_ops", "tensor_size", "comm_type", "comm_size", "comm_src", "comm_dst", "comm_tag",
// "pg_name"}, ...], ...}. Each node is turned into the protobuf Node it stands for and checked
// by the same code as an .et file's nodes.
#pragma once

#include <string>

#include "traces/chakra_trace.h"

namespace racksim::chakra {

// Throws InputError naming the file (and the node) when the JSON does not parse or a field
// has the wrong type.
void read_json_file(const std::string& path, RankTableBuilder& builder);

}  // namespace racksim::chakra
