// Where the layers of the model sit in the pipeline and the path a micro-batch takes.
//
// The model's layers are cut into chunks of equal size. A plain pipeline has one chunk per
// stage; an interleaved one (Megatron's virtual stages) has v chunks per stage, chunk c on stage
// c mod p, so a micro-batch visits every stage v times; DualPipe runs two pipelines in opposite
// directions over the same stages, so every stage holds two chunks: the forward pipeline's
// stage s and the reverse pipeline's stage p-1-s (two copies of the parameters).
#pragma once

#include <vector>

namespace racksim {

struct ChunkRef {
  int stage = 0;        // pipeline rank
  int local_chunk = 0;  // which of the stage's chunks
};

struct LayerRange {
  int first = 0;
  int count = 0;
};

// How the layers split over the chunks, besides evenly.
struct PipelineSplit {
  int first_stage_layers = 0;  // plain pipelines: that many on the first stage, the rest even
  // The embedding and the output layer with its loss each count as one layer of the first and
  // the last chunk (Megatron's account-for-embedding/loss-in-pipeline-split).
  bool embedding_as_layer = false;
  bool loss_as_layer = false;
  // Multi-token-prediction modules counted as layers of the last chunk (Megatron-Core's 'm').
  int mtp_layers = 0;
  // Transformer layers of every chunk in model order, as an explicit layout gives them
  // (layout.pipeline_layout); empty: the rules above.
  std::vector<int> chunk_layers;
  // The chunk (in model order) that runs the multi-token-prediction modules on their own, before
  // the chunk of the output layer (Megatron-Core's "...m|L"); -1: they run with the output layer.
  int standalone_mtp_chunk = -1;
};

class PipelineMap {
 public:
  // `dual`: DualPipe. Throws std::invalid_argument if the layers do not split.
  PipelineMap(int stages, int virtual_stages, bool dual, int layers,
              const PipelineSplit& split = {});

  int stages() const { return stages_; }
  int chunks_per_stage() const { return dual_ ? 2 : virtual_stages_; }
  bool dual() const { return dual_; }

  // The chunks a micro-batch's forward visits, in order. Under DualPipe, micro-batches
  // [0, m/2) enter at stage 0 and [m/2, m) at stage p-1 (`micro_batches` is m).
  const std::vector<ChunkRef>& route(int micro_batch, int micro_batches) const;
  // Position of (stage, local chunk) on the route of `micro_batch`, or -1.
  int position(int micro_batch, int micro_batches, const ChunkRef& chunk) const;
  LayerRange layers(const ChunkRef& chunk) const;
  // Which direction's route a micro-batch takes under DualPipe (0: from stage 0).
  int direction(int micro_batch, int micro_batches) const;
  // Whether micro-batches enter (embedding) or leave (output head) the model at this chunk.
  bool starts_route(const ChunkRef& chunk) const;
  bool ends_route(const ChunkRef& chunk) const;
  // The same for any of the stage's chunks: the stage holds the embedding / the output head.
  bool stage_starts_route(int stage) const;
  bool stage_ends_route(int stage) const;
  // The route position of the chunk that runs the MTP modules apart from the output layer, or -1
  // (they run with it). The transfers between it and the end of the route carry the main hidden
  // state and one per MTP module.
  int standalone_mtp_position() const { return standalone_mtp_position_; }
  // The stage that holds that chunk, or -1.
  int standalone_mtp_stage() const;
  // Whether `chunk` is that chunk.
  bool runs_standalone_mtp(const ChunkRef& chunk) const;

 private:
  int stages_;
  int virtual_stages_;
  bool dual_;
  std::vector<LayerRange> chunk_layers_;  // by the chunk's place in the model
  std::vector<ChunkRef> forward_route_;
  std::vector<ChunkRef> reverse_route_;  // DualPipe's second pipeline
  int standalone_mtp_position_ = -1;
};

}  // namespace racksim
