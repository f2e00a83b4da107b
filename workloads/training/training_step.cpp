#include "workloads/training/training_step.h"

#include <algorithm>
#include <stdexcept>

#include "workloads/training/memory_ledger.h"
#include "workloads/training/rank_step.h"

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

}  // namespace

TrainingStep build_training_step(const config::Scenario& scenario,
                                 const StepGraphOptions& options) {
  const std::vector<bool>& only_ranks = options.only_ranks;
  const TransformerModel model(scenario.model());
  const ParallelLayout layout = ParallelLayout::from_config(scenario.layout());
  const PipelineMap map = pipeline_map(scenario);
  const auto orders = pipeline_orders(scenario);
  const int m = micro_batches_per_replica(scenario);
  if (m < 1) throw std::invalid_argument("training step: no micro-batch per data-parallel rank");
  const auto& t = scenario.training();
  const RankShape shape = rank_shape(scenario);
  std::vector<BlockSteps> layers;
  for (int l = 0; l < model.layers(); ++l) layers.push_back(model.layer_steps(l, shape));
  const BlockSteps embedding = model.embedding_steps(shape);
  const BlockSteps head = model.head_steps(shape);

  TrainingStep step{EventGraph(layout.num_ranks()), {}};
  EventGraph& graph = step.graph;
  const PassStreams main = add_streams(graph, "");
  const StreamId dp_stream = graph.add_stream(kDpStream, StreamKind::kComm);
  const PassStreams overlap = map.dual() ? add_streams(graph, kOverlapSuffix) : main;
  const auto shares = expert_rank_shares(scenario, model);
  const OffloadStreams offload =
      add_offload_streams(graph, t.offload_optimizer() || t.offload_activations());
  std::vector<double> offloaded_bytes;
  if (t.offload_activations()) {
    for (int l = 0; l < model.layers(); ++l) {
      offloaded_bytes.push_back(layer_activation_bytes(scenario, l));
    }
  }
  const RankStep::Shared shared{scenario,
                                model,
                                layout,
                                map,
                                layers,
                                embedding,
                                head,
                                m,
                                main,
                                overlap,
                                dp_stream,
                                shares,
                                offload,
                                offloaded_bytes,
                                options.merge_ring_hops};
  const auto ranks_to_write = static_cast<size_t>(
      only_ranks.empty() ? layout.num_ranks()
                         : std::count(only_ranks.begin(), only_ranks.end(), true));
  bool reserved = false;
  for (RankId r = 0; r < layout.num_ranks(); ++r) {
    if (!only_ranks.empty() && !only_ranks[r]) continue;
    RankStep(shared, &graph, r).write(orders[layout.coords(r).pp]);
    if (!reserved) {
      // Sized from the first rank written, with headroom for stages that differ: growing the
      // graph by doubling cost ~12% of the seed case's CPU in copies and page faults.
      graph.reserve(graph.size() * ranks_to_write * 3 / 2,
                    graph.num_deps() * ranks_to_write * 3 / 2);
      reserved = true;
    }
  }
  step.info.micro_batches = m;
  for (RankId r = 0; r < layout.num_ranks(); ++r) {
    step.info.params_per_rank.push_back(params_on_rank(model, layout, map, r));
  }
  step.info.tokens_per_step = static_cast<double>(t.global_batch_size() * t.seq_length());
  return step;
}

}  // namespace racksim
