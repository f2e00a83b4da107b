// A generated layer step as the compute operation the engine would replay (BF16), for tests of
// the compute model that start from the ledger's steps.
#pragma once

#include "graph/event_graph.h"
#include "workloads/model/layer_steps.h"

namespace racksim::testing {

inline Op op_of(const LayerStep& step) {
  Op op;
  op.kind = OpKind::kCompute;
  op.amount = step.flops;
  op.hbm_bytes = step.hbm_bytes;
  op.op_class = step.op_class;
  op.dtype = DataType::kBf16;
  return op;
}

}  // namespace racksim::testing
