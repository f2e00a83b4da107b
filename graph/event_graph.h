// The per-rank event graph: the one contract between workloads (generators, trace readers) and
// the simulation engine (DESIGN.md §3).
//
// An EventGraph is a list of operations. Each operation belongs to one rank and one stream of
// that rank. Within a stream, operations run one after another in the order they were added
// (like kernels on a CUDA stream). Explicit dependencies link operations of the same rank across
// streams. Ranks meet only through communication:
//   - a collective is matched across the members of its communicator by order: the k-th
//     collective a rank issues on communicator C is the k-th collective of every member of C;
//   - a send is matched with the recv of (peer, tag) in order of issue.
// A recv is passive: no stream walks it. It completes when its data has arrived and its own
// dependencies are done; operations that need the data depend on it.
//
// The graph stays compact (about 60 bytes per operation plus 4 per dependency) because a step
// of a large model has millions of operations.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace racksim {

using OpId = uint32_t;
using RankId = uint32_t;
using CommId = uint32_t;
using StreamId = uint8_t;

inline constexpr OpId kNoOp = std::numeric_limits<OpId>::max();

enum class OpKind : uint8_t {
  kCompute,     // FLOPs and HBM bytes, or a recorded duration
  kCollective,  // a collective over a communicator
  kSend,        // point-to-point send to `peer`
  kRecv,        // point-to-point receive from `peer` (passive)
  kCopy,        // host <-> device copy over PCIe (offload)
};

// What a stream does; the engine runs one actor per (rank, stream) that has operations.
// kHost: host (CPU) work of the rank, e.g. a recorded trace's is_cpu_op nodes: compute
// operations with a recorded duration that take time without occupying the GPU.
enum class StreamKind : uint8_t { kCompute, kComm, kCopy, kHost };

// Where an operation belongs in the training step (for breakdowns and timelines).
enum class Phase : uint8_t {
  kForward,
  kBackward,        // backward; input gradient when the schedule splits it (ZB-H1)
  kBackwardWeight,  // weight-gradient part of a split backward
  kRecompute,       // forward recomputed during backward (activation checkpointing)
  kOptimizer,
  kOther,
};

// The roofline efficiency class of a compute operation.
// kCast: FP8 training's cast of an operand (memory-bound, timed at its own share of the HBM
// bandwidth where the hardware gives one).
enum class OpClass : uint8_t { kGemm, kAttention, kElementwise, kOther, kCast };

enum class DataType : uint8_t { kBf16, kFp16, kFp8, kFp32 };

// Which GEMMs a compute operation with a GEMM shape runs. A forward GEMM C[m,n] = A[m,k] B[k,n];
// its input gradient dA[m,k] = dC[m,n] B^T (inner dimension n), its weight gradient
// dB[k,n] = A^T dC (inner dimension m); kBackward runs both.
enum class GemmPass : uint8_t { kForward, kInputGrad, kWeightGrad, kBackward };

// The shape of a compute operation's GEMMs, where the generator knows it: `batch` independent
// m x k x n products (a batched GEMM). m == 0: no shape (the roofline applies).
struct KernelShape {
  float m = 0;
  float k = 0;
  float n = 0;
  float batch = 1;
  GemmPass pass = GemmPass::kForward;
  // SMs a communication kernel holds while this GEMM runs beside it (an overlapped tensor-parallel
  // reduce-scatter): the GEMM's tiles spread over the others.
  float reserved_sms = 0;
  // 0: the batch's products run as one kernel (a batched or grouped GEMM, tiles of all products
  // in waves). > 0: each product is a kernel of its own, issued in turn on this many streams
  // (Transformer Engine's per-expert GEMMs).
  float streams = 0;

  bool known() const { return m > 0 && k > 0 && n > 0; }
  // FLOPs of the GEMMs of this pass: 2 m k n x batch, twice for kBackward.
  double flops() const;
  bool operator==(const KernelShape&) const = default;
};

enum class CollectiveKind : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kBarrier,
};

// Which parallel dimension a communication belongs to, for the exposed-communication breakdown.
enum class CommDim : uint8_t { kTp, kCp, kEp, kPp, kDp, kOther };

inline constexpr int kNumCommDims = 6;

// How an all-to-all's weights table spreads the traffic. Every member's nominal buffer is
// Op::amount (equal on all members, as for an even all-to-all).
//   kByReceiver (MoE dispatch): each member sends amount x share[j] to member j, so members
//     receive in proportion to their shares (their experts' load);
//   kBySender (MoE combine, the way back): member i sends amount x share[i] to every member, so
//     members send in proportion to their shares;
//   kMatrix (a node-deduplicated dispatch and its combine): the rest of the table is an n x n
//     row-major matrix m and member i sends amount x m[i n + j] to member j. Rows need not sum
//     to 1: a token crossing once per node sends less than one copy per expert.
enum class WeightedAllToAll : uint8_t { kByReceiver = 0, kBySender = 1, kMatrix = 2 };

// Members of an all-to-all its weights table describes (a share per member, or an n x n matrix).
size_t weighted_all_to_all_members(const std::vector<double>& table);

// Copy direction for kCopy operations.
enum class CopyDirection : uint8_t { kHostToDevice, kDeviceToHost };

struct StreamInfo {
  std::string name;  // "compute", "comm.tp", "copy.d2h", ...
  StreamKind kind = StreamKind::kCompute;
};

// One operation. Fields that do not apply to an operation's kind are zero.
struct Op {
  // compute: FLOPs; collective: bytes (nccl-tests convention: the buffer size, i.e. the
  // all-reduce buffer, the all-gather output, the reduce-scatter input, the all-to-all send
  // buffer); send/recv/copy: bytes moved.
  double amount = 0;
  double hbm_bytes = 0;    // compute: bytes through HBM
  double duration_s = -1;  // compute: recorded duration; < 0 means "use the compute model"
  RankId rank = 0;
  uint32_t label = 0;  // index into EventGraph::labels()
  uint32_t peer = 0;   // send/recv: peer rank; collective: communicator; copy: NUMA node
  uint32_t tag = 0;    // send/recv: matching tag; collective: sequence on its communicator
  // all-to-all: how the traffic is spread over the members (0: evenly; else a table of
  // EventGraph::weights, see WeightedAllToAll).
  uint32_t weights = 0;
  // compute: index into EventGraph::shapes() (0: no shape known).
  uint32_t shape = 0;
  int32_t micro_batch = -1;
  int16_t layer = -1;
  OpKind kind = OpKind::kCompute;
  StreamId stream = 0;
  Phase phase = Phase::kOther;
  OpClass op_class = OpClass::kOther;
  DataType dtype = DataType::kBf16;
  CollectiveKind collective = CollectiveKind::kAllReduce;
  CommDim dim = CommDim::kOther;
  CopyDirection copy_direction = CopyDirection::kHostToDevice;
};

// Fields shared by every operation a generator adds; the kind-specific ones are arguments.
struct OpContext {
  RankId rank = 0;
  StreamId stream = 0;
  Phase phase = Phase::kOther;
  int32_t micro_batch = -1;
  int16_t layer = -1;
};

class EventGraph {
 public:
  explicit EventGraph(uint32_t num_ranks = 0);

  uint32_t num_ranks() const { return num_ranks_; }
  size_t size() const { return ops_.size(); }
  const Op& op(OpId id) const { return ops_[id]; }
  const std::vector<Op>& ops() const { return ops_; }

  // Dependencies of an operation (same rank, added before it).
  std::span<const OpId> deps(OpId id) const;
  size_t num_deps() const { return deps_.size(); }

  // Streams are shared by all ranks: stream s of rank r is the pair (r, s).
  StreamId add_stream(std::string name, StreamKind kind);
  const std::vector<StreamInfo>& streams() const { return streams_; }
  StreamId stream_by_name(std::string_view name) const;  // throws if unknown

  // Communicators are interned: the same member list gives the same id. Members are stored
  // in ascending rank order.
  CommId add_communicator(std::vector<RankId> members);
  const std::vector<RankId>& communicator(CommId id) const { return communicators_[id]; }
  size_t num_communicators() const { return communicators_.size(); }

  // Per-member shares of an uneven all-to-all (a skewed MoE routing), interned like labels.
  // The table's first entry says how to read the rest (WeightedAllToAll); the others are one
  // non-negative share per communicator member, summing to 1, or an n x n matrix (kMatrix).
  uint32_t add_weights(std::vector<double> table);
  const std::vector<double>& weights(uint32_t id) const { return weights_[id - 1]; }
  size_t num_weights() const { return weights_.size(); }

  uint32_t intern_label(std::string_view label);
  const std::string& label(uint32_t id) const { return labels_[id]; }
  const std::vector<std::string>& labels() const { return labels_; }

  // Builders. Each returns the new operation's id; `deps` must be operations of the same rank
  // that were added earlier.
  OpId add_compute(const OpContext& ctx, std::string_view label, OpClass op_class, double flops,
                   double hbm_bytes, DataType dtype, std::span<const OpId> deps = {},
                   const KernelShape& shape = {});
  OpId add_recorded_compute(const OpContext& ctx, std::string_view label, double duration_s,
                            double flops, double hbm_bytes, std::span<const OpId> deps = {});
  OpId add_collective(const OpContext& ctx, std::string_view label, CollectiveKind kind,
                      CommId comm, double bytes, CommDim dim, std::span<const OpId> deps = {},
                      uint32_t weights = 0);
  OpId add_send(const OpContext& ctx, std::string_view label, RankId peer, uint32_t tag,
                double bytes, CommDim dim, std::span<const OpId> deps = {});
  OpId add_recv(const OpContext& ctx, std::string_view label, RankId peer, uint32_t tag,
                double bytes, CommDim dim, std::span<const OpId> deps = {});
  OpId add_copy(const OpContext& ctx, std::string_view label, CopyDirection direction,
                uint32_t numa_node, double bytes, std::span<const OpId> deps = {});

  // GEMM shapes of compute operations, interned; entry 0 is the unknown shape.
  uint32_t add_shape(const KernelShape& shape);
  const KernelShape& shape(uint32_t id) const { return shapes_[id]; }
  const std::vector<KernelShape>& shapes() const { return shapes_; }

  // Adds a raw operation (readers use this); checks and fills collective sequence numbers.
  OpId add(Op op, std::span<const OpId> deps);

  void reserve(size_t ops, size_t deps);

 private:
  uint32_t num_ranks_;
  std::vector<Op> ops_;
  std::vector<uint64_t> dep_end_;  // deps of op i are deps_[dep_end_[i-1], dep_end_[i])
  std::vector<OpId> deps_;
  std::vector<StreamInfo> streams_;
  std::vector<std::vector<RankId>> communicators_;
  std::unordered_map<std::string, CommId> communicator_ids_;
  std::vector<std::string> labels_;
  std::vector<std::vector<double>> weights_;
  std::vector<KernelShape> shapes_{KernelShape{}};
  std::map<std::tuple<float, float, float, float, uint8_t, float, float>, uint32_t> shape_ids_;
  std::unordered_map<std::string, uint32_t> weight_ids_;
  std::unordered_map<std::string, uint32_t> label_ids_;
  // Next collective sequence number per (communicator, rank).
  std::unordered_map<uint64_t, uint32_t> collective_seq_;
};

std::string_view to_string(OpKind kind);
std::string_view to_string(Phase phase);
std::string_view to_string(OpClass op_class);
std::string_view to_string(CollectiveKind kind);
std::string_view to_string(CommDim dim);
std::string_view to_string(DataType dtype);
double bytes_per_element(DataType dtype);

}  // namespace racksim
