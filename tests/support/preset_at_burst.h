// A built-in hardware preset at the clocks its kernels were benchmarked at, for tests that compare
// the presets' kernel rates with short benchmarks: a benchmark of milliseconds ends before the
// power limit holds the clocks down, which the Hopper and A100 presets'
// sustained_clock_ratio stands for.
#pragma once

#include <string_view>

#include "proto/scenario.pb.h"
#include "topologies/hardware_presets.h"

namespace racksim::testing {

inline config::Hardware preset_at_burst(std::string_view name) {
  config::Hardware hw = *topo::hardware_preset(name);
  hw.mutable_compute()->clear_sustained_clock_ratio();
  return hw;
}

}  // namespace racksim::testing
