// Megatron-Core's --pipeline-model-parallel-layout, read into what each pipeline chunk holds.
//
// The string lists the chunks in model order: 'E' the embedding, 't' a transformer layer, 'm' a
// multi-token-prediction module, 'L' the output layer with the loss; '|' ends a chunk, "x*n"
// repeats a layer and "(...)*n" a group (not nested), commas and spaces are cosmetic. Chunk c
// runs on pipeline stage c mod pp as that stage's virtual stage c / pp. Megatron-Core's own
// example: "Et*3|(tt|)*29,m|L" is a chunk of the embedding and 3 layers, 29 chunks of 2 layers,
// one of the MTP module and one of the loss (megatron/core/transformer/
// pipeline_parallel_layer_layout.py, github.com/NVIDIA/Megatron-LM, BSD-3).
#pragma once

#include <string_view>
#include <vector>

namespace racksim {

struct LayoutChunk {
  int transformer_layers = 0;
  int mtp_modules = 0;
  bool layer_after_mtp = false;  // a 't' follows an 'm' in this chunk
  bool embedding_first = false;  // 'E' opens this chunk
  bool loss_last = false;        // 'L' closes this chunk
  int embeddings = 0;            // every 'E' and 'L' in the chunk, wherever it stands
  int losses = 0;
};

// Throws std::invalid_argument saying what in the string is wrong (an unknown character, a
// nested group, a repetition that unrolls to more than a million layers).
std::vector<LayoutChunk> parse_pipeline_layout(std::string_view layout);

}  // namespace racksim
