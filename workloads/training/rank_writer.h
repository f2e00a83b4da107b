// Writing one rank's operations into an event graph, step by step, keeping the dependencies
// that every generator needs: a kernel waits for what the compute stream is waiting for (a
// collective's result, a received activation, a send that must finish first); a collective or
// a send waits for the kernel that produced its data.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graph/event_graph.h"
#include "proto/scenario.pb.h"
#include "workloads/model/layer_steps.h"

namespace racksim {

// The compute stream of a rank as it is being written.
struct ComputeChain {
  OpId last_compute = kNoOp;
  std::vector<OpId> pending;  // what the next kernel must wait for

  // What a communication that ships the chain's latest result must wait for.
  std::vector<OpId> inputs() const;
};

// The streams one pass writes to (DualPipe's overlapped passes use a second set).
struct PassStreams {
  StreamId compute = 0;
  StreamId tp = 0;
  StreamId pp = 0;
  StreamId ep = 0;
  StreamId cp = 0;
};

// Where an operation belongs (phase, micro-batch, layer).
struct OpTag {
  Phase phase = Phase::kOther;
  int micro_batch = -1;
  int layer = -1;
};

// How a rank sums its micro-batches' weight gradients (training.grad_accumulation) and the dtype
// of the buffer they accumulate in (training.grad_reduce_dtype).
struct GradAccumulation {
  config::Training::GradAccumulation mode = config::Training::FUSED_IN_WGRAD;
  DataType buffer = DataType::kFp32;
};

// How the FP8 casts before FP8 GEMMs find their scales (training.fp8_scaling).
enum class Fp8Scaling { kDelayed, kCurrent };

// What FP8 training casts before its GEMMs: scales as `scaling` says; with `fp8_params`
// (training.fp8_param_gather) the weights are FP8 already and the first micro-batch only
// transposes them.
struct Fp8Recipe {
  Fp8Scaling scaling = Fp8Scaling::kDelayed;
  bool fp8_params = false;
};

class RankWriter {
 public:
  // Every kernel in `dtype`.
  RankWriter(EventGraph* graph, RankId rank, DataType dtype)
      : RankWriter(graph, rank, dtype, dtype) {}
  // GEMMs in `gemm_dtype`, every other kernel in `other_dtype` (FP8 training: only the GEMMs
  // run in FP8, after the casts `fp8` says); weight gradients accumulate as `accumulation` says.
  RankWriter(EventGraph* graph, RankId rank, DataType gemm_dtype, DataType other_dtype,
             GradAccumulation accumulation = {}, Fp8Recipe fp8 = {})
      : graph_(graph),
        rank_(rank),
        gemm_dtype_(gemm_dtype),
        dtype_(other_dtype),
        accumulation_(accumulation),
        fp8_(fp8) {}

  RankId rank() const { return rank_; }
  EventGraph& graph() { return *graph_; }
  // Where an operation of this rank on `stream` belongs, for operations written straight into the
  // graph (copies, recorded durations).
  OpContext context(StreamId stream, const OpTag& tag) const;

  // A kernel after everything the chain waits for; it becomes the chain's last kernel.
  OpId kernel(ComputeChain& chain, StreamId stream, const LayerStep& step, const OpTag& tag);
  // A collective on the chain's data; the chain's next kernel waits for it.
  OpId collective(ComputeChain& chain, StreamId stream, const std::string& name,
                  CollectiveKind kind, CommId comm, double bytes, CommDim dim, const OpTag& tag,
                  uint32_t weights = 0);
  // A collective that only waits for `deps` and that nothing waits for yet (gradient buckets,
  // prefetched parameters).
  OpId detached_collective(StreamId stream, const std::string& name, CollectiveKind kind,
                           CommId comm, double bytes, CommDim dim, const OpTag& tag,
                           const std::vector<OpId>& deps);
  // A send of the chain's latest result; when `blocking`, the chain's next kernel waits for it.
  OpId send(ComputeChain& chain, StreamId stream, const std::string& name, RankId peer,
            uint32_t tag, double bytes, CommDim dim, bool blocking, const OpTag& op_tag);
  // A receive the chain's next kernel waits for.
  OpId recv(ComputeChain& chain, StreamId stream, const std::string& name, RankId peer,
            uint32_t tag, double bytes, CommDim dim, const OpTag& op_tag);

 private:
  EventGraph* graph_;
  RankId rank_;
  DataType gemm_dtype_;
  DataType dtype_;
  GradAccumulation accumulation_;
  Fp8Recipe fp8_;
};

// A deduplicated dispatch matrix (n x n, row-major) as the graph's kMatrix weights tables: the
// dispatch's and its transpose's (the combine's). {0, 0} for an empty matrix.
std::pair<uint32_t, uint32_t> add_dedup_weights(EventGraph& graph,
                                                const std::vector<double>& matrix);

}  // namespace racksim
