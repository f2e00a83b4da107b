// A rank's compute time split by what sets each kernel's time under the compute model
// (sim::KernelBound): the GEMMs the power limit holds at the sustained ceiling, the GEMMs whose
// waves of tiles set them, the kernels the HBM holds, the kernels the host cannot issue faster,
// fixed durations. It says which lever would move the step: a GPU that holds its clocks, bigger
// micro-batches (fuller waves, fewer host-bound kernels), faster HBM.
#pragma once

#include <array>

#include "graph/event_graph.h"
#include "sim/compute_model.h"

namespace racksim::analysis {

struct ComputeBounds {
  RankId rank = 0;
  std::array<double, sim::kNumKernelBounds> seconds{};  // indexed by sim::KernelBound
  // The SM clock the FLOP-bound kernels ran at, over the clock their rates were measured at
  // (hardware.compute.sustained_clock_ratio): the report names it where it is not 1.
  double sustained_clock_ratio = 1;
  double total_s() const;
  double share(sim::KernelBound bound) const;
};

// Every compute operation of `rank` in `graph`, timed and classified by `model`. A step extended
// from shorter ones repeats the same kernels, so the shares hold for it too.
ComputeBounds compute_bounds(const EventGraph& graph, RankId rank, const sim::ComputeModel& model);

}  // namespace racksim::analysis
