// What each rank did over the step, as coloured blocks ready to draw: the data behind
// pipeline.svg, kept apart from the drawing.
//
// Per rank two lanes: the compute lane tiles the whole step (kernels by phase, and the idle
// gaps between them by what the next kernel waited for, as the breakdown charges them), and the
// transfer lane shows the communication and copies in flight. Blocks are merged and aggregated
// at the drawing's resolution: neighbours of the same kind and micro-batch closer than half a
// pixel merge, and blocks narrower than a pixel are pooled into one-pixel blocks coloured by
// the kind that took most of the pixel. So a lane never has more blocks than pixels.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/event_graph.h"
#include "sim/engine.h"

namespace racksim::analysis {

enum class BlockKind : uint8_t {
  kForward,
  kBackward,
  kWeightGradient,
  kRecompute,
  kOptimizer,
  kCommunication,  // compute lane: waiting for communication; transfer lane: in flight
  kOffload,
  kIdle,  // waiting for another pipeline stage (bubble), or for nothing in particular
  kOther,
};

inline constexpr int kNumBlockKinds = 9;

struct Block {
  double x0 = 0;  // pixels from the start of the step
  double x1 = 0;
  BlockKind kind = BlockKind::kIdle;
  int32_t micro_batch = -1;  // -1: none, or several pooled together
};

struct RankLanes {
  std::vector<Block> compute;
  std::vector<Block> transfers;
};

// The lanes of every rank, with time t drawn at t x pixels_per_s.
std::vector<RankLanes> build_lanes(const EventGraph& graph, const sim::SimResult& result,
                                   double step_time_s, double pixels_per_s);

}  // namespace racksim::analysis
