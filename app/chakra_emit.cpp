#include "app/chakra_emit.h"

#include "sim/compute_model.h"
#include "traces/chakra_writer.h"

namespace racksim::app {

void emit_chakra(const EventGraph& graph, const sim::ComputeModel& model, OutputDir& dir) {
  chakra::WriteOptions options;
  // With the op's GEMM shape, so that the kernel model's durations are what the trace records.
  options.modelled_duration_s = [&model, &graph](const Op& op) {
    return model.duration_s(op, graph.shape(op.shape));
  };
  const chakra::ChakraWriter writer(graph, options);
  for (RankId r = 0; r < graph.num_ranks(); ++r) {
    dir.write(chakra::rank_file_name(kChakraTraceName, r),
              [&](std::ostream& out) { writer.write_rank(r, out); });
  }
  dir.write(std::string(kChakraTraceName) + ".comm_groups.json",
            [&](std::ostream& out) { out << writer.comm_groups_json(); });
}

}  // namespace racksim::app
