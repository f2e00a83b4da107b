// What one training step is made of, before any operation is written: the pipeline's shape and
// pass orders, the micro-batches per replica, the per-rank shapes of a layer's kernels, and the
// parameters each rank holds. resolve_training_plan (training_plan.h) reads the scenario through
// these once; the generator and the memory ledger use the per-rank parameter split.
#pragma once

#include <vector>

#include "proto/scenario.pb.h"
#include "workloads/model/transformer.h"
#include "workloads/training/gradient_sync.h"
#include "workloads/training/layout.h"
#include "workloads/training/pipeline_map.h"
#include "workloads/training/pipeline_schedule.h"

namespace racksim {

DataType to_data_type(config::DType dtype);
// What activations and the kernels other than GEMMs run in. FP8 training (Transformer Engine's
// recipes, DeepSeek-V3's) runs only the GEMMs in FP8: activations, attention, norms and
// element-wise kernels stay in BF16.
DataType activation_dtype(DataType training_dtype);

// The pipeline shape the scenario asks for, and every stage's pass order.
PipelineMap pipeline_map(const config::Scenario& scenario);
std::vector<PassOrder> pipeline_orders(const config::Scenario& scenario);
int micro_batches_per_replica(const config::Scenario& scenario);

// The shape one rank's kernels of a layer have (micro-batch, sequence, TP/CP/EP split, dtype).
RankShape rank_shape(const config::Scenario& scenario);
// Per layer, the expert-parallel ranks' shares of the routed tokens (empty for dense layers).
std::vector<std::vector<double>> expert_rank_shares(const config::Scenario& scenario,
                                                    const TransformerModel& model);

// Parameters held by `rank`: its chunks' layers (dense weights split over TP, routed experts
// over EP), plus the embedding on the stage where a micro-batch enters and the output head where
// it leaves (shared when tied and on the same stage).
RankParams rank_params(const TransformerModel& model, const ParallelLayout& layout,
                       const PipelineMap& map, RankId rank);
// The vocabulary tables among them: the embedding, the output head (unless tied and on the same
// stage) and a standalone MTP chunk's copy of the embedding. FP8 recipes run these in BF16.
double rank_table_params(const TransformerModel& model, const ParallelLayout& layout,
                         const PipelineMap& map, RankId rank);
double params_on_rank(const TransformerModel& model, const ParallelLayout& layout,
                      const PipelineMap& map, RankId rank);
// One layer's parameters on a rank.
RankParams split_params(const TransformerModel& model, const ParallelLayout& layout, int layer);
// The multi-token-prediction modules' parameters on the last stage's ranks: each module's
// projection and norms split over TP, its layer (one like the last) as that layer splits.
RankParams mtp_split_params(const TransformerModel& model, const ParallelLayout& layout);
// What the ranks that run the MTP modules hold for them: mtp_split_params, and where the modules
// run in a chunk of their own after the first, that chunk's copy of the embedding table to embed
// the next tokens (Megatron-Core builds one for every model chunk that runs MTP without the
// embedding).
RankParams mtp_chunk_params(const TransformerModel& model, const ParallelLayout& layout,
                            const PipelineMap& map);

}  // namespace racksim
