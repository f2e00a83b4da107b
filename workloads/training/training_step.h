// The event graph of one training step of a transformer under a TP x CP x DP x PP layout
// (Megatron-style): per rank, the pipeline schedule's passes over the rank's chunks of layers,
// tensor-parallel collectives inside each layer, point-to-point activations and gradients
// between stages, data-parallel gradient reduction (ZeRO 0-3, optionally bucketed and
// overlapped with the backward), and the optimizer step.
#pragma once

#include <vector>

#include "graph/event_graph.h"
#include "workloads/model/transformer.h"
#include "workloads/training/gradient_sync.h"
#include "workloads/training/layout.h"
#include "workloads/training/pipeline_map.h"
#include "workloads/training/pipeline_schedule.h"
#include "workloads/training/step_shape.h"
#include "workloads/training/training_plan.h"

namespace racksim {

// The stream names of generated graphs (the engine runs one actor per used stream).
inline constexpr const char* kComputeStream = "compute";
inline constexpr const char* kTpStream = "comm.tp";
inline constexpr const char* kPpStream = "comm.pp";
inline constexpr const char* kDpStream = "comm.dp";
inline constexpr const char* kEpStream = "comm.ep";
inline constexpr const char* kCpStream = "comm.cp";
inline constexpr const char* kToHostStream = "copy.d2h";
inline constexpr const char* kToDeviceStream = "copy.h2d";
inline constexpr const char* kHostStream = "host";
// DualPipe's second pass of an overlapped pair runs on streams with this suffix.
inline constexpr const char* kOverlapSuffix = ".overlap";

struct OffloadStreams {
  StreamId to_host = 0;
  StreamId to_device = 0;
  StreamId host = 0;
};

// What the generator learns beyond the plan (the micro-batches and tokens per step are the
// plan's: TrainingPlan::micro_batches, tokens_per_step()).
struct TrainingStepInfo {
  std::vector<double> params_per_rank;  // parameters held by each rank (after TP/PP split)
};

struct TrainingStep {
  EventGraph graph;
  TrainingStepInfo info;
};

// How much of the step the graph spells out: chosen by the caller from the fidelity it will
// simulate at (sim::merges_ring_hops), so the generator reads no simulation setting itself.
struct StepGraphOptions {
  // Ring attention's h hops as one transfer (AGGREGATED and coarser; same step time, 2
  // transfers instead of 2h).
  bool merge_ring_hops = false;
  // Symmetry folding: only ranks r with only_ranks[r] get operations (empty: all).
  std::vector<bool> only_ranks;
};

// Builds the step of a resolved plan (training_plan.h).
TrainingStep build_training_step(const TrainingPlan& plan, const StepGraphOptions& options = {});

}  // namespace racksim
