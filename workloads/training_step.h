// The event graph of one training step of a transformer under a TP x CP x DP x PP layout
// (Megatron-style): per rank, the pipeline schedule's passes over the rank's chunks of layers,
// tensor-parallel collectives inside each layer, point-to-point activations and gradients
// between stages, data-parallel gradient reduction (ZeRO 0-3, optionally bucketed and
// overlapped with the backward), and the optimizer step.
#pragma once

#include <vector>

#include "proto/scenario.pb.h"
#include "workloads/event_graph.h"
#include "workloads/gradient_sync.h"
#include "workloads/layout.h"
#include "workloads/pipeline_map.h"
#include "workloads/pipeline_schedule.h"
#include "workloads/transformer.h"

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

struct TrainingStepInfo {
  int micro_batches = 0;                // per data-parallel rank per step
  std::vector<double> params_per_rank;  // parameters held by each rank (after TP/PP split)
  double tokens_per_step = 0;           // global batch x sequence length
};

struct TrainingStep {
  EventGraph graph;
  TrainingStepInfo info;
};

// Builds the step for a resolved and validated scenario.
// With `only_ranks` (symmetry folding), only ranks r with only_ranks[r] get operations.
TrainingStep build_training_step(const config::Scenario& scenario,
                                 const std::vector<bool>& only_ranks = {});

// The pipeline shape the scenario asks for, and every stage's pass order.
PipelineMap pipeline_map(const config::Scenario& scenario);
std::vector<PassOrder> pipeline_orders(const config::Scenario& scenario);
int micro_batches_per_replica(const config::Scenario& scenario);

// Parameters held by `rank`: its chunks' layers (dense weights split over TP, routed experts
// over EP), plus the embedding on the stage where a micro-batch enters and the output head where
// it leaves (shared when tied and on the same stage).
RankParams rank_params(const TransformerModel& model, const ParallelLayout& layout,
                       const PipelineMap& map, RankId rank);
double params_on_rank(const TransformerModel& model, const ParallelLayout& layout,
                      const PipelineMap& map, RankId rank);
// One layer's parameters on a rank.
RankParams split_params(const TransformerModel& model, const ParallelLayout& layout, int layer);

DataType to_data_type(config::DType dtype);

}  // namespace racksim
