// NCCL work in a Kineto trace: which kernels are NCCL's, which collective a kernel or an
// nccl:* annotation names, and the collective's bytes (nccl-tests convention, as
// EventGraph::add_collective takes them) and group.
#pragma once

#include <optional>
#include <string_view>

#include "graph/event_graph.h"
#include "traces/kineto_events.h"
#include "traces/kineto_program.h"

namespace racksim::kineto {

// ncclKernel_* / ncclDevKernel_* (and their `void ...` signatures).
bool is_nccl_kernel_name(std::string_view name);

// The collective a name says: "allreduce", "all_reduce", "_all_gather_base",
// "reduce_scatter_tensor", "all_to_all_single", ... or a kernel name ("ncclKernel_AllGather_
// RING_LL_Sum_float(...)"). nullopt for point-to-point (send, recv, SendRecv) and unknown names.
std::optional<CollectiveKind> collective_kind(std::string_view name);

// Makes `op` (a kernel op of `kernel`) a collective from `args` (the kernel's own, or the
// nccl:* annotation around its launch; may be null) and returns true. Returns false, leaving
// the op a kernel with its recorded duration, for point-to-point kernels and for kernels whose
// size nothing gives. Throws InputError naming the event and field when the group's size
// disagrees with its ranks or the group does not hold the trace's rank.
bool resolve_collective(const KinetoRank& rank, const Event& kernel, const CollectiveArgs* args,
                        ProgramOp* op);

}  // namespace racksim::kineto
