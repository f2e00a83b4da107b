// What a scenario's recompute runs again: the modules its selective recompute names
// (training.recompute_modules) and the layers its full recompute takes (recompute_method). Read by
// the validation that refuses settings that make no sense and by the training plan that runs them.
#pragma once

#include <algorithm>

#include "proto/scenario.pb.h"

namespace racksim {

inline bool lists_recompute_module(const config::Training& training,
                                   config::Training::RecomputeModule module) {
  const auto& modules = training.recompute_modules();
  return std::find(modules.begin(), modules.end(), module) != modules.end();
}

// Whether full recompute runs the layer at `index_in_chunk` (from 0, within its model chunk)
// again (training.recompute_method and recompute_num_layers).
inline bool recomputes_whole_layer(const config::Training& training, int index_in_chunk) {
  if (training.recompute() != config::Training::FULL) return false;
  const int n = training.recompute_num_layers();
  switch (training.recompute_method()) {
    case config::Training::BLOCK:
      return index_in_chunk < n;
    case config::Training::EVERY_NTH:
      return n > 0 && (index_in_chunk + 1) % n == 0;
    default:
      return true;
  }
}

// Whether the layer at `index_in_chunk` opens a group that full recompute checkpoints as one
// (UNIFORM: every recompute_num_layers-th from the chunk's first; otherwise every layer taken).
inline bool opens_recompute_group(const config::Training& training, int index_in_chunk) {
  const int n = training.recompute_num_layers();
  if (training.recompute_method() != config::Training::UNIFORM || n <= 1) return true;
  return index_in_chunk % n == 0;
}

}  // namespace racksim
