#include "workloads/training/pipeline_map.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace racksim {

namespace {

// The chunk sizes an explicit layout gives, checked against the pipeline they must fill. A
// chunk may hold no transformer layer (Megatron-Core's standalone embedding or loss chunk).
std::vector<int> explicit_chunk_sizes(int chunks, bool dual, int layers,
                                      const PipelineSplit& split) {
  const std::vector<int>& sizes = split.chunk_layers;
  const bool negative = std::any_of(sizes.begin(), sizes.end(), [](int n) { return n < 0; });
  const int total = std::accumulate(sizes.begin(), sizes.end(), 0);
  if (dual || static_cast<int>(sizes.size()) != chunks || negative || total != layers) {
    throw std::invalid_argument(fmt::format(
        "pipeline: an explicit layout of {} chunks holding {} layers does not fill {} chunks "
        "with {} layers{}",
        sizes.size(), total, chunks, layers, dual ? " (and DualPipe takes none)" : ""));
  }
  return sizes;
}

// Layers per chunk, in model order.
std::vector<int> chunk_sizes(int chunks, int stages, int virtual_stages, bool dual, int layers,
                             const PipelineSplit& split) {
  if (!split.chunk_layers.empty()) return explicit_chunk_sizes(chunks, dual, layers, split);
  if (split.first_stage_layers > 0 && stages > 1) {
    const int first = split.first_stage_layers;
    if (dual || virtual_stages != 1 || first >= layers || (layers - first) % (stages - 1) != 0 ||
        split.embedding_as_layer || split.loss_as_layer || split.mtp_layers > 0) {
      throw std::invalid_argument(fmt::format(
          "pipeline: {} layers with {} on the first stage do not split evenly over the other {} "
          "stages (a plain pipeline only)",
          layers, first, stages - 1));
    }
    std::vector<int> sizes(chunks, (layers - first) / (stages - 1));
    sizes.front() = first;
    return sizes;
  }
  const int embedding = split.embedding_as_layer ? 1 : 0;
  const int last = (split.loss_as_layer ? 1 : 0) + split.mtp_layers;
  const int counted = layers + embedding + last;
  std::vector<int> sizes(chunks, counted / chunks);
  sizes.front() -= embedding;
  sizes.back() -= last;
  const bool empty = std::any_of(sizes.begin(), sizes.end(), [](int n) { return n < 1; });
  if (counted % chunks != 0 || empty) {
    throw std::invalid_argument(fmt::format(
        "pipeline: {} layers{} do not split into {} equal chunks of at least one layer", layers,
        embedding + last > 0
            ? fmt::format(" and {} counted for the embedding, the loss and the MTP modules",
                          embedding + last)
            : "",
        chunks));
  }
  return sizes;
}

}  // namespace

PipelineMap::PipelineMap(int stages, int virtual_stages, bool dual, int layers,
                         const PipelineSplit& split)
    : stages_(stages), virtual_stages_(virtual_stages), dual_(dual) {
  if (stages < 1 || virtual_stages < 1 || layers < 1) {
    throw std::invalid_argument("pipeline: stages, virtual stages and layers must be >= 1");
  }
  if (dual && virtual_stages != 1) {
    throw std::invalid_argument("pipeline: DualPipe does not combine with virtual stages");
  }
  const int chunks = dual ? stages : stages * virtual_stages;
  int first = 0;
  for (int size : chunk_sizes(chunks, stages, virtual_stages, dual, layers, split)) {
    chunk_layers_.push_back({first, size});
    first += size;
  }
  if (dual) {
    for (int s = 0; s < stages; ++s) forward_route_.push_back({s, 0});
    for (int s = 0; s < stages; ++s) reverse_route_.push_back({stages - 1 - s, 1});
  } else {
    // Interleaving: global chunk c runs on stage c mod p as that stage's chunk c / p.
    for (int c = 0; c < chunks; ++c) forward_route_.push_back({c % stages, c / stages});
  }
  if (split.standalone_mtp_chunk >= 0) {
    if (split.chunk_layers.empty() || split.standalone_mtp_chunk + 1 >= chunks) {
      throw std::invalid_argument(fmt::format(
          "pipeline: MTP modules on their own in chunk {} need an explicit layout with a later "
          "chunk for the output layer ({} chunks)",
          split.standalone_mtp_chunk, chunks));
    }
    standalone_mtp_position_ = split.standalone_mtp_chunk;
  }
}

int PipelineMap::standalone_mtp_stage() const {
  return standalone_mtp_position_ < 0 ? -1 : forward_route_[standalone_mtp_position_].stage;
}

int PipelineMap::direction(int micro_batch, int micro_batches) const {
  return dual_ && micro_batch >= micro_batches / 2 ? 1 : 0;
}

const std::vector<ChunkRef>& PipelineMap::route(int micro_batch, int micro_batches) const {
  return direction(micro_batch, micro_batches) == 0 ? forward_route_ : reverse_route_;
}

int PipelineMap::position(int micro_batch, int micro_batches, const ChunkRef& chunk) const {
  const auto& r = route(micro_batch, micro_batches);
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i].stage == chunk.stage && r[i].local_chunk == chunk.local_chunk) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

namespace {

bool same(const ChunkRef& a, const ChunkRef& b) {
  return a.stage == b.stage && a.local_chunk == b.local_chunk;
}

}  // namespace

bool PipelineMap::runs_standalone_mtp(const ChunkRef& chunk) const {
  return standalone_mtp_position_ >= 0 && same(forward_route_[standalone_mtp_position_], chunk);
}

bool PipelineMap::starts_route(const ChunkRef& chunk) const {
  return same(forward_route_.front(), chunk) || (dual_ && same(reverse_route_.front(), chunk));
}

bool PipelineMap::ends_route(const ChunkRef& chunk) const {
  return same(forward_route_.back(), chunk) || (dual_ && same(reverse_route_.back(), chunk));
}

bool PipelineMap::stage_starts_route(int stage) const {
  for (int c = 0; c < chunks_per_stage(); ++c) {
    if (starts_route({stage, c})) return true;
  }
  return false;
}

bool PipelineMap::stage_ends_route(int stage) const {
  for (int c = 0; c < chunks_per_stage(); ++c) {
    if (ends_route({stage, c})) return true;
  }
  return false;
}

LayerRange PipelineMap::layers(const ChunkRef& chunk) const {
  // The position of the chunk in the model: its place on the forward route, or for DualPipe's
  // reverse chunk, the reverse pipeline's stage index.
  int model_chunk = 0;
  if (dual_) {
    model_chunk = chunk.local_chunk == 0 ? chunk.stage : stages_ - 1 - chunk.stage;
  } else {
    model_chunk = chunk.local_chunk * stages_ + chunk.stage;
  }
  return chunk_layers_[model_chunk];
}

}  // namespace racksim
