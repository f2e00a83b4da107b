// Before building a training step's event graph: a lower bound on the memory the graph and its
// simulation take, and a refusal (exit 2, with the figure and how to reduce it) of a
// scenario that would not fit the machine, instead of a bad_alloc minutes later.
#pragma once

#include <cstddef>

#include "workloads/training/training_plan.h"

namespace racksim::app {

struct GraphMemoryEstimate {
  double ops = 0;    // operations in the event graph
  double bytes = 0;  // peak memory of building and simulating it
};

// From the plan's shape: simulated ranks x micro-batches x layers per stage x passes x
// operations per layer and pass, with the smallest figures measured on the shipped scenarios
// (graph_memory.cpp): a lower bound, so only what certainly does not fit is refused.
GraphMemoryEstimate estimate_graph_memory(const TrainingPlan& plan, size_t simulated_ranks);

// The machine's physical memory in bytes.
double machine_memory_bytes();

// Throws InputError (field "sim") when the lower bound exceeds `available_bytes`, saying by how
// much and what to change (fold replicas, fewer layers or micro-batches, a coarser fidelity).
void check_graph_fits(const TrainingPlan& plan, size_t simulated_ranks, double available_bytes);

}  // namespace racksim::app
