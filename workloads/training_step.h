// The event graph of one training step of a dense transformer under a TP x CP x DP x PP layout
// (Megatron-style): per rank, the pipeline schedule's forward and backward passes over the
// rank's layers, tensor-parallel collectives inside each layer, point-to-point activations and
// gradients between stages, the data-parallel gradient all-reduce, and the optimizer step.
#pragma once

#include <vector>

#include "proto/scenario.pb.h"
#include "workloads/event_graph.h"
#include "workloads/layout.h"
#include "workloads/transformer.h"

namespace racksim {

// The stream names every generated graph has (the engine runs one actor per used stream).
inline constexpr const char* kComputeStream = "compute";
inline constexpr const char* kTpStream = "comm.tp";
inline constexpr const char* kPpStream = "comm.pp";
inline constexpr const char* kDpStream = "comm.dp";

struct TrainingStepInfo {
  int micro_batches = 0;  // per data-parallel rank per step
  int layers_per_stage = 0;
  std::vector<double> params_per_rank;  // parameters held by each rank (after TP/PP split)
  double tokens_per_step = 0;           // global batch x sequence length
};

struct TrainingStep {
  EventGraph graph;
  TrainingStepInfo info;
};

// Builds the step for a resolved and validated scenario.
TrainingStep build_training_step(const config::Scenario& scenario);

// Parameters held by `rank` (the layers of its stage split over TP, plus the embedding on the
// first stage and the output head on the last).
double params_on_rank(const DenseTransformer& model, const ParallelLayout& layout, RankId rank);

DataType to_data_type(config::DType dtype);

}  // namespace racksim
