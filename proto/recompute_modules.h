// Which modules a scenario's selective recompute names (training.recompute_modules): read by the
// validation that refuses lists that make no sense and by the training plan that runs them.
#pragma once

#include <algorithm>

#include "proto/scenario.pb.h"

namespace racksim {

inline bool lists_recompute_module(const config::Training& training,
                                   config::Training::RecomputeModule module) {
  const auto& modules = training.recompute_modules();
  return std::find(modules.begin(), modules.end(), module) != modules.end();
}

}  // namespace racksim
