#include "graph/event_graph.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace racksim {

namespace {

std::string communicator_key(const std::vector<RankId>& members) {
  std::string key;
  key.reserve(members.size() * 6);
  for (RankId r : members) key += fmt::format("{},", r);
  return key;
}

}  // namespace

EventGraph::EventGraph(uint32_t num_ranks) : num_ranks_(num_ranks) {}

std::span<const OpId> EventGraph::deps(OpId id) const {
  const uint64_t begin = id == 0 ? 0 : dep_end_[id - 1];
  return {deps_.data() + begin, static_cast<size_t>(dep_end_[id] - begin)};
}

StreamId EventGraph::add_stream(std::string name, StreamKind kind) {
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (streams_[i].name == name) return static_cast<StreamId>(i);
  }
  if (streams_.size() >= 255) throw std::length_error("event graph: too many streams");
  streams_.push_back({std::move(name), kind});
  return static_cast<StreamId>(streams_.size() - 1);
}

StreamId EventGraph::stream_by_name(std::string_view name) const {
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (streams_[i].name == name) return static_cast<StreamId>(i);
  }
  throw std::out_of_range(fmt::format("event graph: no stream named '{}'", name));
}

CommId EventGraph::add_communicator(std::vector<RankId> members) {
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  for (RankId r : members) {
    if (r >= num_ranks_) {
      throw std::out_of_range(
          fmt::format("event graph: communicator member {} >= {} ranks", r, num_ranks_));
    }
  }
  std::string key = communicator_key(members);
  auto [it, inserted] = communicator_ids_.try_emplace(std::move(key), communicators_.size());
  if (inserted) communicators_.push_back(std::move(members));
  return it->second;
}

size_t weighted_all_to_all_members(const std::vector<double>& table) {
  if (table.empty()) return 0;
  const size_t entries = table.size() - 1;
  if (table[0] != static_cast<double>(WeightedAllToAll::kMatrix)) return entries;
  const auto n = static_cast<size_t>(std::llround(std::sqrt(static_cast<double>(entries))));
  return n * n == entries ? n : 0;
}

uint32_t EventGraph::add_weights(std::vector<double> table) {
  std::string key;
  for (double w : table) key += fmt::format("{:a},", w);
  auto [it, inserted] = weight_ids_.try_emplace(std::move(key), weights_.size() + 1);
  if (inserted) weights_.push_back(std::move(table));
  return it->second;
}

uint32_t EventGraph::intern_label(std::string_view label) {
  auto [it, inserted] = label_ids_.try_emplace(std::string(label), labels_.size());
  if (inserted) labels_.emplace_back(label);
  return it->second;
}

void EventGraph::reserve(size_t ops, size_t deps) {
  ops_.reserve(ops);
  dep_end_.reserve(ops);
  deps_.reserve(deps);
}

OpId EventGraph::add(Op op, std::span<const OpId> deps) {
  if (ops_.size() >= kNoOp) throw std::length_error("event graph: too many operations");
  if (op.rank >= num_ranks_) {
    throw std::out_of_range(fmt::format("event graph: rank {} >= {} ranks", op.rank, num_ranks_));
  }
  if (op.stream >= streams_.size()) {
    throw std::out_of_range(fmt::format("event graph: unknown stream {}", op.stream));
  }
  const OpId id = static_cast<OpId>(ops_.size());
  for (OpId d : deps) {
    if (d >= id || ops_[d].rank != op.rank) {
      throw std::invalid_argument(fmt::format(
          "event graph: op {} of rank {} depends on op {}, which is not an earlier op of that rank",
          id, op.rank, d));
    }
  }
  if (op.kind == OpKind::kCollective) {
    if (op.peer >= communicators_.size()) {
      throw std::out_of_range(fmt::format("event graph: unknown communicator {}", op.peer));
    }
    const auto& members = communicators_[op.peer];
    if (!std::binary_search(members.begin(), members.end(), op.rank)) {
      throw std::invalid_argument(fmt::format(
          "event graph: rank {} issues a collective on communicator {} without being a member",
          op.rank, op.peer));
    }
    const uint64_t key = (static_cast<uint64_t>(op.peer) << 32) | op.rank;
    op.tag = collective_seq_[key]++;
  }
  if ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) && op.peer >= num_ranks_) {
    throw std::out_of_range(fmt::format("event graph: peer {} >= {} ranks", op.peer, num_ranks_));
  }
  ops_.push_back(op);
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  dep_end_.push_back(deps_.size());
  return id;
}

namespace {

Op make_op(const OpContext& ctx, OpKind kind, uint32_t label) {
  Op op;
  op.rank = ctx.rank;
  op.stream = ctx.stream;
  op.phase = ctx.phase;
  op.micro_batch = ctx.micro_batch;
  op.layer = ctx.layer;
  op.kind = kind;
  op.label = label;
  return op;
}

}  // namespace

OpId EventGraph::add_compute(const OpContext& ctx, std::string_view label, OpClass op_class,
                             double flops, double hbm_bytes, DataType dtype,
                             std::span<const OpId> deps, const KernelShape& shape) {
  Op op = make_op(ctx, OpKind::kCompute, intern_label(label));
  op.op_class = op_class;
  op.amount = flops;
  op.hbm_bytes = hbm_bytes;
  op.dtype = dtype;
  op.shape = add_shape(shape);
  return add(op, deps);
}

uint32_t EventGraph::add_shape(const KernelShape& shape) {
  if (!shape.known()) return 0;
  const auto key =
      std::make_tuple(shape.m, shape.k, shape.n, shape.batch, static_cast<uint8_t>(shape.pass),
                      shape.reserved_sms, shape.streams);
  auto [it, inserted] = shape_ids_.try_emplace(key, static_cast<uint32_t>(shapes_.size()));
  if (inserted) shapes_.push_back(shape);
  return it->second;
}

double KernelShape::flops() const {
  const double one = 2.0 * m * k * n * batch;
  return pass == GemmPass::kBackward ? 2 * one : one;
}

OpId EventGraph::add_recorded_compute(const OpContext& ctx, std::string_view label,
                                      double duration_s, double flops, double hbm_bytes,
                                      std::span<const OpId> deps) {
  Op op = make_op(ctx, OpKind::kCompute, intern_label(label));
  op.duration_s = duration_s;
  op.amount = flops;
  op.hbm_bytes = hbm_bytes;
  return add(op, deps);
}

OpId EventGraph::add_collective(const OpContext& ctx, std::string_view label, CollectiveKind kind,
                                CommId comm, double bytes, CommDim dim, std::span<const OpId> deps,
                                uint32_t weights) {
  Op op = make_op(ctx, OpKind::kCollective, intern_label(label));
  op.collective = kind;
  op.peer = comm;
  op.amount = bytes;
  op.dim = dim;
  op.weights = weights;
  return add(op, deps);
}

OpId EventGraph::add_send(const OpContext& ctx, std::string_view label, RankId peer, uint32_t tag,
                          double bytes, CommDim dim, std::span<const OpId> deps) {
  Op op = make_op(ctx, OpKind::kSend, intern_label(label));
  op.peer = peer;
  op.tag = tag;
  op.amount = bytes;
  op.dim = dim;
  return add(op, deps);
}

OpId EventGraph::add_recv(const OpContext& ctx, std::string_view label, RankId peer, uint32_t tag,
                          double bytes, CommDim dim, std::span<const OpId> deps) {
  Op op = make_op(ctx, OpKind::kRecv, intern_label(label));
  op.peer = peer;
  op.tag = tag;
  op.amount = bytes;
  op.dim = dim;
  return add(op, deps);
}

OpId EventGraph::add_copy(const OpContext& ctx, std::string_view label, CopyDirection direction,
                          uint32_t numa_node, double bytes, std::span<const OpId> deps) {
  Op op = make_op(ctx, OpKind::kCopy, intern_label(label));
  op.copy_direction = direction;
  op.peer = numa_node;
  op.amount = bytes;
  return add(op, deps);
}

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::kCompute:
      return "compute";
    case OpKind::kCollective:
      return "collective";
    case OpKind::kSend:
      return "send";
    case OpKind::kRecv:
      return "recv";
    case OpKind::kCopy:
      return "copy";
  }
  return "?";
}

std::string_view to_string(Phase phase) {
  switch (phase) {
    case Phase::kForward:
      return "forward";
    case Phase::kBackward:
      return "backward";
    case Phase::kBackwardWeight:
      return "backward_weight";
    case Phase::kRecompute:
      return "recompute";
    case Phase::kOptimizer:
      return "optimizer";
    case Phase::kOther:
      return "other";
  }
  return "?";
}

std::string_view to_string(OpClass op_class) {
  switch (op_class) {
    case OpClass::kGemm:
      return "gemm";
    case OpClass::kAttention:
      return "attention";
    case OpClass::kElementwise:
      return "elementwise";
    case OpClass::kOther:
      return "other";
    case OpClass::kCast:
      return "cast";
  }
  return "?";
}

std::string_view to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kReduce:
      return "reduce";
    case CollectiveKind::kBarrier:
      return "barrier";
  }
  return "?";
}

std::string_view to_string(CommDim dim) {
  switch (dim) {
    case CommDim::kTp:
      return "tp";
    case CommDim::kCp:
      return "cp";
    case CommDim::kEp:
      return "ep";
    case CommDim::kPp:
      return "pp";
    case CommDim::kDp:
      return "dp";
    case CommDim::kOther:
      return "other";
  }
  return "?";
}

std::string_view to_string(DataType dtype) {
  switch (dtype) {
    case DataType::kBf16:
      return "bf16";
    case DataType::kFp16:
      return "fp16";
    case DataType::kFp8:
      return "fp8";
    case DataType::kFp32:
      return "fp32";
  }
  return "?";
}

double bytes_per_element(DataType dtype) {
  switch (dtype) {
    case DataType::kBf16:
    case DataType::kFp16:
      return 2;
    case DataType::kFp8:
      return 1;
    case DataType::kFp32:
      return 4;
  }
  return 2;
}

}  // namespace racksim
