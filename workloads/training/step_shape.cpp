#include "workloads/training/step_shape.h"

#include <algorithm>

#include "proto/recompute_modules.h"
#include "workloads/moe/expert_routing.h"
#include "workloads/training/pipeline_layout.h"

namespace racksim {

// Transformer Engine's compute streams for its per-expert GEMMs (get_num_compute_streams in
// transformer_engine/common/util/multi_stream.cpp, a constant).
constexpr int kTransformerEngineComputeStreams = 4;

DataType to_data_type(config::DType dtype) {
  switch (dtype) {
    case config::FP16:
      return DataType::kFp16;
    case config::FP8:
      return DataType::kFp8;
    case config::FP32:
      return DataType::kFp32;
    default:
      return DataType::kBf16;
  }
}

DataType activation_dtype(DataType training_dtype) {
  return training_dtype == DataType::kFp8 ? DataType::kBf16 : training_dtype;
}

int micro_batches_per_replica(const config::Scenario& s) {
  const auto& t = s.training();
  return static_cast<int>(t.global_batch_size() / (t.micro_batch_size() * s.layout().dp()));
}

PipelineMap pipeline_map(const config::Scenario& s) {
  const bool dual = s.training().schedule() == config::Training::DUALPIPE;
  const int v = s.training().schedule() == config::Training::INTERLEAVED_1F1B
                    ? std::max(1, s.layout().virtual_stages())
                    : 1;
  PipelineSplit split;
  split.first_stage_layers = s.layout().first_stage_layers();
  split.embedding_as_layer = s.layout().account_for_embedding_in_split();
  split.loss_as_layer = s.layout().account_for_loss_in_split();
  split.mtp_layers = s.layout().account_for_mtp_in_split() ? s.model().mtp_depth() : 0;
  if (!s.layout().pipeline_layout().empty()) {
    const std::vector<LayoutChunk> chunks = parse_pipeline_layout(s.layout().pipeline_layout());
    for (size_t c = 0; c < chunks.size(); ++c) {
      split.chunk_layers.push_back(chunks[c].transformer_layers);
      if (chunks[c].mtp_modules > 0 && c + 1 < chunks.size()) {
        split.standalone_mtp_chunk = static_cast<int>(c);
      }
    }
  }
  return PipelineMap(s.layout().pp(), v, dual, static_cast<int>(s.model().num_layers()), split);
}

RankShape rank_shape(const config::Scenario& s) {
  const auto& t = s.training();
  RankShape shape;
  shape.micro_batch = t.micro_batch_size();
  shape.seq_length = t.seq_length();
  shape.tp = s.layout().tp();
  shape.sequence_parallel = s.layout().sequence_parallel();
  shape.dtype = activation_dtype(to_data_type(t.dtype()));
  shape.cp = std::max(1, s.layout().cp());
  shape.ulysses = s.layout().cp_algorithm() == config::Layout::ULYSSES;
  shape.ep = std::max(1, s.layout().ep());
  shape.indexer_chunk_tokens = t.indexer_chunk_tokens();
  shape.materialized_attention = t.attention_impl() == config::Training::MATERIALIZED;
  shape.unfused_cross_entropy = t.cross_entropy() == config::Training::FP32_UNFUSED;
  shape.rotary_complex_fp32 = t.rotary_impl() == config::Training::ROTARY_COMPLEX_FP32;
  shape.embedding_transpose = t.embedding_transpose();
  if (t.expert_gemm() == config::Training::PER_EXPERT_STREAMS) {
    shape.expert_gemm_streams = kTransformerEngineComputeStreams;
  }
  if (t.has_moe_dispatch_dtype()) {
    // FP8 as DeepSeek-V3 sends it: a byte per element and an FP32 scale per 1 x 128 tile.
    const DataType d = to_data_type(t.moe_dispatch_dtype());
    shape.moe_dispatch_element_bytes =
        d == DataType::kFp8 ? 1.0 + 4.0 / 128.0 : bytes_per_element(d);
  }
  return shape;
}

// Per layer, the expert-parallel ranks' shares of the routed tokens (empty for dense layers).
std::vector<std::vector<double>> expert_rank_shares(const config::Scenario& s,
                                                    const TransformerModel& model) {
  std::vector<std::vector<double>> shares(model.layers());
  int moe_layer = 0;
  for (int l = 0; l < model.layers(); ++l) {
    const MlpSpec& mlp = model.mlp(l);
    if (!mlp.moe) continue;
    shares[l] = rank_shares(expert_shares(s.training(), mlp.experts, moe_layer++),
                            std::max(1, s.layout().ep()));
  }
  return shares;
}

namespace {

double kernel_flops(const std::vector<LayerStep>& steps) {
  double flops = 0;
  for (const LayerStep& step : steps) flops += step.flops;
  return flops;
}

// FLOPs of the first stage's chunk passes: what the zero-bubble play weighs passes by. An
// explicit layout may leave the first stage the embedding alone; the play needs the passes'
// proportions, so the first stage that holds layers stands in for it.
PassCosts estimated_pass_costs(const config::Scenario& s) {
  const TransformerModel model(s.model());
  const PipelineMap map = pipeline_map(s);
  LayerRange layers = map.layers({0, 0});
  for (int stage = 1; layers.count == 0 && stage < map.stages(); ++stage) {
    layers = map.layers({stage, 0});
  }
  const RankShape shape = rank_shape(s);
  PassCosts costs{0, 0, 0};
  for (int l = layers.first; l < layers.first + layers.count; ++l) {
    const BlockSteps block = model.layer_steps(l, shape);
    costs.forward += kernel_flops(block.forward);
    costs.backward_input += kernel_flops(block.backward_input);
    costs.backward_weight += kernel_flops(block.backward_weight);
    if (recomputes_whole_layer(s.training(), l - layers.first))
      costs.backward_input += kernel_flops(block.forward);
  }
  return costs;
}

}  // namespace

std::vector<PassOrder> pipeline_orders(const config::Scenario& s) {
  const int p = s.layout().pp();
  const int m = micro_batches_per_replica(s);
  const auto schedule = s.training().schedule();
  if (schedule == config::Training::ZB_H1) return zb_h1_orders(p, m, estimated_pass_costs(s));
  std::vector<PassOrder> orders;
  for (int stage = 0; stage < p; ++stage) {
    switch (schedule) {
      case config::Training::GPIPE:
        orders.push_back(gpipe_order(stage, p, m));
        break;
      case config::Training::INTERLEAVED_1F1B:
        orders.push_back(interleaved_order(stage, p, std::max(1, s.layout().virtual_stages()), m));
        break;
      case config::Training::DUALPIPE:
        orders.push_back(dualpipe_order(stage, p, m));
        break;
      default:
        orders.push_back(one_f_one_b_order(stage, p, m));
        break;
    }
    if (s.training().moe_a2a_overlap()) orders.back() = combined_1f1b_order(orders.back());
  }
  return orders;
}

RankParams split_params(const TransformerModel& model, const ParallelLayout& layout, int layer) {
  const double experts = model.layer_expert_params(layer);
  return {(model.layer_params(layer) - experts) / layout.tp(), experts / layout.ep()};
}

RankParams mtp_split_params(const TransformerModel& model, const ParallelLayout& layout) {
  const int depth = model.mtp_depth();
  if (depth == 0) return {};
  const int last = static_cast<int>(model.layers()) - 1;
  const RankParams layer = split_params(model, layout, last);
  const double projection = (model.mtp_params() / depth - model.layer_params(last)) / layout.tp();
  return {depth * (projection + layer.dense), depth * layer.expert};
}

namespace {

// The embedding table's copy a standalone MTP chunk after the first holds (Megatron-Core builds
// one for every model chunk that runs MTP without the embedding), else 0.
double mtp_chunk_table_params(const TransformerModel& model, const ParallelLayout& layout,
                              const PipelineMap& map) {
  return map.standalone_mtp_position() > 0 ? model.embedding_params() / layout.tp() : 0;
}

// The stage holds the MTP modules: beside the output head, or in a chunk of their own.
bool stage_runs_mtp(const PipelineMap& map, int stage) {
  const int mtp_stage = map.standalone_mtp_stage();
  return mtp_stage < 0 ? map.stage_ends_route(stage) : stage == mtp_stage;
}

}  // namespace

RankParams mtp_chunk_params(const TransformerModel& model, const ParallelLayout& layout,
                            const PipelineMap& map) {
  RankParams params = mtp_split_params(model, layout);
  params.tables = mtp_chunk_table_params(model, layout, map);
  params.dense += params.tables;
  return params;
}

double rank_table_params(const TransformerModel& model, const ParallelLayout& layout,
                         const PipelineMap& map, RankId rank) {
  const int stage = layout.coords(rank).pp;
  const bool embedding = map.stage_starts_route(stage), head = map.stage_ends_route(stage);
  const double table = model.embedding_params() / layout.tp();
  double tables = embedding ? table : 0;
  // The output head: its own matrix, or with tied embeddings a copy of the table unless this
  // stage already holds the table.
  if (head && (!model.tied_embeddings() || !embedding)) tables += table;
  if (stage_runs_mtp(map, stage)) tables += mtp_chunk_table_params(model, layout, map);
  return tables;
}

RankParams rank_params(const TransformerModel& model, const ParallelLayout& layout,
                       const PipelineMap& map, RankId rank) {
  const int stage = layout.coords(rank).pp;
  RankParams params;
  for (int c = 0; c < map.chunks_per_stage(); ++c) {
    const LayerRange layers = map.layers({stage, c});
    for (int l = layers.first; l < layers.first + layers.count; ++l) {
      const RankParams p = split_params(model, layout, l);
      params.dense += p.dense;
      params.expert += p.expert;
    }
  }
  // The embedding and output tables (the MTP chunk's copy included), the final norm, the MTP
  // modules' own weights.
  params.tables = rank_table_params(model, layout, map, rank);
  params.dense += params.tables;
  if (map.stage_ends_route(stage)) params.dense += static_cast<double>(model.hidden());
  if (stage_runs_mtp(map, stage)) {
    const RankParams mtp = mtp_split_params(model, layout);
    params.dense += mtp.dense;
    params.expert += mtp.expert;
  }
  return params;
}

double params_on_rank(const TransformerModel& model, const ParallelLayout& layout,
                      const PipelineMap& map, RankId rank) {
  return rank_params(model, layout, map, rank).total();
}

}  // namespace racksim
