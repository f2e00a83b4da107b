#include "workloads/training/training_step.h"

#include <algorithm>
#include <stdexcept>

#include "workloads/training/memory_ledger.h"
#include "workloads/training/rank_step.h"
#include "workloads/training/rank_writer.h"

namespace racksim {

namespace {

OffloadStreams add_offload_streams(EventGraph& graph, bool used) {
  OffloadStreams s;
  if (!used) return s;
  s.to_host = graph.add_stream(kToHostStream, StreamKind::kCopy);
  s.to_device = graph.add_stream(kToDeviceStream, StreamKind::kCopy);
  s.host = graph.add_stream(kHostStream, StreamKind::kHost);
  return s;
}

PassStreams add_streams(EventGraph& graph, const std::string& suffix) {
  PassStreams s;
  s.compute = graph.add_stream(kComputeStream + suffix, StreamKind::kCompute);
  s.tp = graph.add_stream(kTpStream + suffix, StreamKind::kComm);
  s.pp = graph.add_stream(kPpStream, StreamKind::kComm);
  s.ep = graph.add_stream(kEpStream + suffix, StreamKind::kComm);
  s.cp = graph.add_stream(kCpStream + suffix, StreamKind::kComm);
  return s;
}

// Per layer, what activation offload moves to the host and back (empty without it).
std::vector<double> offloaded_activation_bytes(const TrainingPlan& plan) {
  std::vector<double> bytes;
  if (!plan.training.offload_activations) return bytes;
  for (int l = 0; l < plan.model.layers(); ++l) bytes.push_back(layer_activation_bytes(plan, l));
  return bytes;
}

// Writes every rank's step (or those `only_ranks` marks) into `graph`, in rank order.
void write_ranks(const RankStep::Shared& shared, const std::vector<bool>& only_ranks,
                 EventGraph* graph) {
  const TrainingPlan& plan = shared.plan;
  const ParallelLayout& layout = plan.layout;
  const auto ranks_to_write = static_cast<size_t>(
      only_ranks.empty() ? layout.num_ranks()
                         : std::count(only_ranks.begin(), only_ranks.end(), true));
  bool reserved = false;
  for (RankId r = 0; r < layout.num_ranks(); ++r) {
    if (!only_ranks.empty() && !only_ranks[r]) continue;
    RankStep(shared, graph, r).write(plan.orders[layout.coords(r).pp]);
    if (!reserved) {
      // Sized from the first rank written, with headroom for stages that differ: growing the
      // graph by doubling cost ~12% of the seed case's CPU in copies and page faults.
      graph->reserve(graph->size() * ranks_to_write * 3 / 2,
                     graph->num_deps() * ranks_to_write * 3 / 2);
      reserved = true;
    }
  }
}

// What selective recompute runs again in a layer's backward: the modules
// training.recompute_modules lists (the attention's core unless the list leaves it out).
void choose_selective_recompute(const TrainingSettings& t, BlockSteps* layer) {
  std::vector<LayerStep> chosen;
  auto add = [&](bool on, const std::vector<LayerStep>& steps) {
    if (on) chosen.insert(chosen.end(), steps.begin(), steps.end());
  };
  add(t.recomputes_norms, layer->norm_recompute);
  add(t.recomputes_up_projections, layer->up_projection_recompute);
  add(t.recomputes_core_attention, layer->selective_recompute);
  add(t.recomputes_mlp, layer->mlp_recompute);
  add(t.recomputes_moe, layer->moe_recompute);
  add(t.recomputes_moe_activation, layer->moe_activation_recompute);
  add(t.recomputes_shared_experts, layer->shared_expert_recompute);
  add(t.recomputes_alternate_matmuls, layer->alternate_matmul_recompute);
  layer->selective_recompute = std::move(chosen);
}

}  // namespace

TrainingStep build_training_step(const TrainingPlan& plan, const StepGraphOptions& options) {
  const std::vector<bool>& only_ranks = options.only_ranks;
  const TransformerModel& model = plan.model;
  const ParallelLayout& layout = plan.layout;
  const PipelineMap& map = plan.map;
  const int m = plan.micro_batches;
  if (m < 1) throw std::invalid_argument("training step: no micro-batch per data-parallel rank");
  const TrainingSettings& t = plan.training;
  std::vector<BlockSteps> layers;
  for (int l = 0; l < model.layers(); ++l) {
    layers.push_back(model.layer_steps(l, plan.shape));
    choose_selective_recompute(t, &layers.back());
  }
  const BlockSteps embedding = model.embedding_steps(plan.shape);
  // MTP modules in a chunk of their own run there; the output layer's chunk keeps their heads.
  const bool standalone_mtp = map.standalone_mtp_position() >= 0;
  const BlockSteps head =
      model.head_steps(plan.shape, standalone_mtp ? TransformerModel::MtpPlacement::kStandalone
                                                  : TransformerModel::MtpPlacement::kWithHead);
  const BlockSteps mtp = standalone_mtp ? model.mtp_steps(plan.shape) : BlockSteps{};
  const HeadDeferral deferral = head_deferral(head);

  TrainingStep step{EventGraph(layout.num_ranks()), {}};
  EventGraph& graph = step.graph;
  const PassStreams main = add_streams(graph, "");
  const StreamId dp_stream = graph.add_stream(kDpStream, StreamKind::kComm);
  // DualPipe and combined 1F1B run two passes at once, each on its own streams.
  const PassStreams overlap =
      map.dual() || t.moe_a2a_overlap ? add_streams(graph, kOverlapSuffix) : main;
  const OffloadStreams offload =
      add_offload_streams(graph, t.offload_optimizer || t.offload_activations);
  const std::vector<double> offloaded_bytes = offloaded_activation_bytes(plan);
  const auto [dedup_dispatch, dedup_combine] = add_dedup_weights(graph, plan.dedup_dispatch);
  const RankStep::Shared shared{plan,
                                layers,
                                embedding,
                                head,
                                mtp,
                                deferral,
                                main,
                                overlap,
                                dp_stream,
                                offload,
                                offloaded_bytes,
                                options.merge_ring_hops,
                                dedup_dispatch,
                                dedup_combine};
  write_ranks(shared, only_ranks, &graph);
  for (RankId r = 0; r < layout.num_ranks(); ++r) {
    step.info.params_per_rank.push_back(params_on_rank(model, layout, map, r));
  }
  return step;
}

}  // namespace racksim
