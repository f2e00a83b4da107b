#include "analysis/pipeline_lanes.h"

#include <algorithm>
#include <array>

#include "analysis/breakdown.h"

namespace racksim::analysis {

namespace {

constexpr double kAbsorbWaitPx = 2.0;

BlockKind kernel_kind(Phase phase) {
  switch (phase) {
    case Phase::kForward:
      return BlockKind::kForward;
    case Phase::kBackward:
      return BlockKind::kBackward;
    case Phase::kBackwardWeight:
      return BlockKind::kWeightGradient;
    case Phase::kRecompute:
      return BlockKind::kRecompute;
    case Phase::kOptimizer:
      return BlockKind::kOptimizer;
    case Phase::kOther:
      break;
  }
  return BlockKind::kOther;
}

BlockKind wait_kind(WaitCause cause) {
  switch (cause) {
    case WaitCause::kComm:
      return BlockKind::kCommunication;
    case WaitCause::kOffload:
      return BlockKind::kOffload;
    case WaitCause::kBubble:
    case WaitCause::kOther:
      break;
  }
  return BlockKind::kIdle;
}

// Appends, merging with the previous block when it is the same kind and micro-batch and less
// than half a pixel away.
void append(std::vector<Block>& lane, Block block) {
  if (block.x1 <= block.x0) return;
  if (!lane.empty()) {
    Block& last = lane.back();
    if (last.kind == block.kind && last.micro_batch == block.micro_batch &&
        block.x0 - last.x1 < 0.5) {
      last.x1 = std::max(last.x1, block.x1);
      return;
    }
  }
  lane.push_back(block);
}

// Pools blocks narrower than a pixel into one-pixel blocks of the kind that took most of it.
std::vector<Block> pool_small(const std::vector<Block>& lane) {
  std::vector<Block> out;
  std::array<double, kNumBlockKinds> share{};
  double pool_x0 = -1, pool_x1 = -1;
  auto flush = [&] {
    if (pool_x0 < 0) return;
    const auto top = std::max_element(share.begin(), share.end()) - share.begin();
    out.push_back({pool_x0, std::max(pool_x1, pool_x0 + 1), static_cast<BlockKind>(top), -1});
    share.fill(0);
    pool_x0 = pool_x1 = -1;
  };
  for (const Block& b : lane) {
    const bool small = b.x1 - b.x0 < 1;
    // A pool closes at about a pixel and a half, so a lane has at most one block per pixel.
    if (pool_x0 >= 0 && (!small || b.x0 - pool_x1 > 1 || b.x1 - pool_x0 > 1.5)) flush();
    if (!small) {
      out.push_back(b);
      continue;
    }
    if (pool_x0 < 0) pool_x0 = b.x0;
    pool_x1 = std::max(pool_x1, b.x1);
    share[static_cast<size_t>(b.kind)] += b.x1 - b.x0;
  }
  flush();
  return out;
}

bool is_wait(BlockKind kind) {
  return kind == BlockKind::kCommunication || kind == BlockKind::kIdle ||
         kind == BlockKind::kOffload;
}

// A wait narrower than `max_px` between two blocks of the same pass (kind and micro-batch) is
// drawn as part of the pass: a forward of micro-batch 3 reads as one block with its number, not
// as slivers between its layers' tensor-parallel all-reduces (the transfer lane still shows
// them, and the breakdown counts them).
std::vector<Block> absorb_short_waits(const std::vector<Block>& lane, double max_px) {
  std::vector<Block> out;
  for (size_t i = 0; i < lane.size(); ++i) {
    const Block& b = lane[i];
    if (!out.empty() && is_wait(b.kind) && b.x1 - b.x0 < max_px && i + 1 < lane.size()) {
      const Block& next = lane[i + 1];
      Block& prev = out.back();
      if (!is_wait(prev.kind) && prev.kind == next.kind && prev.micro_batch == next.micro_batch) {
        prev.x1 = next.x1;
        ++i;  // the next block is now part of prev
        continue;
      }
    }
    if (!out.empty() && out.back().kind == b.kind && out.back().micro_batch == b.micro_batch &&
        b.x0 - out.back().x1 < 0.5) {
      out.back().x1 = std::max(out.back().x1, b.x1);
      continue;
    }
    out.push_back(b);
  }
  return out;
}

struct TimedOp {
  double start_s;
  double end_s;
  OpId id;
};

std::vector<Block> compute_lane(const EventGraph& graph, const sim::SimResult& result,
                                std::vector<TimedOp>& kernels, double step_time_s, double px) {
  std::sort(kernels.begin(), kernels.end(),
            [](const TimedOp& a, const TimedOp& b) { return a.start_s < b.start_s; });
  std::vector<Block> lane;
  double cursor = 0;
  for (const TimedOp& k : kernels) {
    if (k.start_s > cursor) {
      for (const WaitPiece& w : wait_pieces(graph, result, k.id, cursor, k.start_s)) {
        append(lane, {w.from_s * px, w.to_s * px, wait_kind(w.cause), -1});
      }
    }
    const Op& op = graph.op(k.id);
    const double from = std::max(cursor, k.start_s);
    append(lane, {from * px, k.end_s * px, kernel_kind(op.phase), op.micro_batch});
    cursor = std::max(cursor, k.end_s);
  }
  if (step_time_s > cursor) append(lane, {cursor * px, step_time_s * px, BlockKind::kIdle, -1});
  return pool_small(absorb_short_waits(lane, kAbsorbWaitPx));
}

std::vector<Block> transfer_lane(const EventGraph& graph, std::vector<TimedOp>& transfers,
                                 double px) {
  std::sort(transfers.begin(), transfers.end(),
            [](const TimedOp& a, const TimedOp& b) { return a.start_s < b.start_s; });
  std::vector<Block> lane;
  for (const TimedOp& t : transfers) {
    const bool copy = graph.op(t.id).kind == OpKind::kCopy;
    const double from = lane.empty() ? t.start_s * px : std::max(t.start_s * px, lane.back().x0);
    append(lane, {from, t.end_s * px, copy ? BlockKind::kOffload : BlockKind::kCommunication, -1});
  }
  // Transfers of several streams overlap: fold each block into its predecessor when it starts
  // inside it, so the lane is a union of busy stretches.
  std::vector<Block> merged;
  for (const Block& b : lane) {
    if (!merged.empty() && merged.back().kind == b.kind && b.x0 <= merged.back().x1 + 0.5) {
      merged.back().x1 = std::max(merged.back().x1, b.x1);
    } else {
      merged.push_back(b);
    }
  }
  return pool_small(merged);
}

}  // namespace

std::vector<RankLanes> build_lanes(const EventGraph& graph, const sim::SimResult& result,
                                   double step_time_s, double pixels_per_s) {
  std::vector<std::vector<TimedOp>> kernels(graph.num_ranks()), transfers(graph.num_ranks());
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    const sim::OpTiming& t = result.timing[id];
    if (t.end_s < 0) continue;
    const bool on_compute = graph.streams()[op.stream].kind == StreamKind::kCompute;
    if (op.kind == OpKind::kCompute && on_compute) {
      kernels[op.rank].push_back({t.start_s, t.end_s, id});
    } else if (op.kind != OpKind::kCompute) {
      transfers[op.rank].push_back({t.start_s, t.end_s, id});
    }
  }
  std::vector<RankLanes> lanes(graph.num_ranks());
  for (RankId r = 0; r < graph.num_ranks(); ++r) {
    lanes[r].compute = compute_lane(graph, result, kernels[r], step_time_s, pixels_per_s);
    lanes[r].transfers = transfer_lane(graph, transfers[r], pixels_per_s);
    std::vector<TimedOp>().swap(kernels[r]);  // free as we go: large runs have millions
    std::vector<TimedOp>().swap(transfers[r]);
  }
  return lanes;
}

}  // namespace racksim::analysis
