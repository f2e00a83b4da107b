#include "traces/chakra_build.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "graph/graph_check.h"
#include "graph/group_label.h"
#include "traces/chakra_order.h"

namespace racksim::chakra {

namespace {

constexpr size_t kListed = 5;  // problems named one by one before "and N more"

bool is_p2p(uint8_t type) {
  return type == ChakraProtoMsg::COMM_SEND_NODE || type == ChakraProtoMsg::COMM_RECV_NODE;
}

bool is_elided(uint8_t type) {
  return type == kUnknownType || type == ChakraProtoMsg::METADATA_NODE ||
         type == ChakraProtoMsg::INVALID_NODE;
}

// Chakra's CollectiveCommType as racksim's collective. GATHER and SCATTER have no NCCL-style
// plan of their own: a gather moves the same bytes towards one rank as a reduce, a scatter
// away from one rank as a broadcast.
CollectiveKind collective_of(int comm_type) {
  switch (comm_type) {
    case ChakraProtoMsg::REDUCE:
    case ChakraProtoMsg::GATHER:
      return CollectiveKind::kReduce;
    case ChakraProtoMsg::ALL_GATHER:
      return CollectiveKind::kAllGather;
    case ChakraProtoMsg::SCATTER:
    case ChakraProtoMsg::BROADCAST:
      return CollectiveKind::kBroadcast;
    case ChakraProtoMsg::ALL_TO_ALL:
      return CollectiveKind::kAllToAll;
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:
      return CollectiveKind::kReduceScatter;
    case ChakraProtoMsg::BARRIER:
      return CollectiveKind::kBarrier;
    default:
      return CollectiveKind::kAllReduce;
  }
}

InputError trace_error(const std::string& file, const std::string& detail) {
  return InputError(SourceLocation{file, 0, 0}, "", detail);
}

// Where a node is: rank and index in that rank's table.
struct NodeRef {
  RankId rank = 0;
  uint32_t index = 0;
};

class TraceGraphBuilder {
 public:
  TraceGraphBuilder(const std::vector<RankTable>& tables, const Interner& names,
                    ComputeSource compute, std::vector<std::string> warnings)
      : tables_(tables), names_(names), compute_(compute) {
    trace_.graph = EventGraph(static_cast<uint32_t>(tables.size()));
    trace_.warnings = std::move(warnings);
    trace_.compute = compute;
    for (const RankTable& t : tables) trace_.files.push_back(t.file);
  }

  ChakraTrace build() {
    for (const RankTable& t : tables_) orders_.push_back(order_rank(t, trace_.warnings));
    declare_streams();
    declare_communicators();
    declare_weights();
    infer_group_members();
    plan_tags();
    add_ops();
    check_point_to_point();
    check_collectives();
    summarize();
    return std::move(trace_);
  }

 private:
  const TraceNode& node(NodeRef r) const { return tables_[r.rank].nodes[r.index]; }
  std::string where(NodeRef r) const {
    return fmt::format("{}: node {}", tables_[r.rank].file, node(r).id);
  }
  std::string where_op(OpId op) const {
    const RankId rank = trace_.graph.op(op).rank;
    return fmt::format("{}: node {}", tables_[rank].file, trace_.node_id[op]);
  }
  [[noreturn]] void fail(NodeRef r, const std::string& detail) const {
    throw trace_error(tables_[r.rank].file,
                      fmt::format("node {} (record {}): {}", node(r).id, node(r).record, detail));
  }

  // racksim's streams first, in the order it wrote them, so its graphs come back identical.
  void declare_streams() {
    for (const RankTable& t : tables_) {
      if (t.streams.empty()) continue;
      trace_.summary.racksim_metadata = true;
      for (const auto& [name, kind] : t.streams) trace_.graph.add_stream(name, kind);
      return;
    }
  }

  void declare_communicators() {
    std::map<uint32_t, std::vector<RankId>> declared;
    for (RankId r = 0; r < tables_.size(); ++r) {
      for (const auto& [id, members] : tables_[r].communicators) {
        for (RankId m : members) {
          if (m >= tables_.size()) {
            throw trace_error(tables_[r].file,
                              fmt::format("racksim communicator {} includes rank {}, but the "
                                          "trace has {} rank files",
                                          id, m, tables_.size()));
          }
        }
        auto [it, inserted] = declared.try_emplace(id, members);
        if (!inserted && it->second != members) {
          throw trace_error(tables_[r].file,
                            fmt::format("racksim communicator {} has other members than in {}", id,
                                        tables_[0].file));
        }
      }
    }
    for (const auto& [id, members] : declared) {
      declared_comm_[id] = trace_.graph.add_communicator(members);
    }
  }

  // racksim's all-to-all weight tables, in id order so that the ids come back the same.
  void declare_weights() {
    std::map<uint32_t, const std::vector<double>*> tables;
    for (const RankTable& t : tables_) {
      for (const auto& [id, table] : t.weights) {
        auto [it, inserted] = tables.try_emplace(id, &table);
        if (!inserted && *it->second != table) {
          throw trace_error(t.file, fmt::format("weights table {} differs between ranks", id));
        }
      }
    }
    for (const auto& [id, table] : tables) declared_weights_[id] = trace_.graph.add_weights(*table);
  }

  // A process group's members are the ranks whose traces issue collectives on it.
  void infer_group_members() {
    for (RankId r = 0; r < tables_.size(); ++r) {
      for (const TraceNode& n : tables_[r].nodes) {
        if (n.type == ChakraProtoMsg::COMM_COLL_NODE && !n.has(kCpuOp) && n.comm < 0 &&
            n.pg != kNoName) {
          group_members_[n.pg].insert(r);
        }
      }
    }
  }

  RankId peer_of(NodeRef r) const {
    const TraceNode& n = node(r);
    const bool send = n.type == ChakraProtoMsg::COMM_SEND_NODE;
    const int32_t peer = send ? n.comm_dst : n.comm_src;
    const int32_t self = send ? n.comm_src : n.comm_dst;
    const char* peer_attr = send ? "comm_dst" : "comm_src";
    if (peer < 0) fail(r, fmt::format("a {} without '{}'", send ? "send" : "recv", peer_attr));
    if (static_cast<size_t>(peer) >= tables_.size()) {
      fail(r, fmt::format("'{}' = {}, but the trace has {} rank files (ranks 0..{})", peer_attr,
                          peer, tables_.size(), tables_.size() - 1));
    }
    if (self >= 0 && static_cast<RankId>(self) != r.rank) {
      fail(r, fmt::format("'{}' = {} in the file of rank {}", send ? "comm_src" : "comm_dst", self,
                          r.rank));
    }
    return static_cast<RankId>(peer);
  }

  // Tags such that matching by (source, destination, tag) in issue order, which the engine
  // does, is matching by (source, destination, tag, size): a (source, destination, tag) used
  // with several sizes gets one fresh tag per extra size.
  void plan_tags() {
    using Key = std::tuple<RankId, RankId, uint32_t>;
    std::map<Key, std::set<double>> sizes;
    uint32_t max_tag = 0;
    for_each_p2p([&](NodeRef r, RankId src, RankId dst) {
      sizes[{src, dst, node(r).tag}].insert(node(r).comm_bytes);
      max_tag = std::max(max_tag, node(r).tag);
    });
    uint32_t next = max_tag + 1;
    for (const auto& [key, set] : sizes) {
      if (set.size() < 2) continue;
      for (auto it = std::next(set.begin()); it != set.end(); ++it) retag_[{key, *it}] = next++;
    }
    tags_.resize(tables_.size());
    for (RankId r = 0; r < tables_.size(); ++r) tags_[r].assign(tables_[r].nodes.size(), 0);
    for_each_p2p([&](NodeRef r, RankId src, RankId dst) {
      const TraceNode& n = node(r);
      const auto it = retag_.find({{src, dst, n.tag}, n.comm_bytes});
      tags_[r.rank][r.index] = it == retag_.end() ? n.tag : it->second;
      if (it != retag_.end()) ++trace_.summary.retagged;
    });
  }

  template <typename F>
  void for_each_p2p(F&& f) const {
    for (RankId r = 0; r < tables_.size(); ++r) {
      for (uint32_t i = 0; i < tables_[r].nodes.size(); ++i) {
        const NodeRef ref{r, i};
        if (!is_p2p(node(ref).type)) continue;
        const RankId peer = peer_of(ref);
        const bool send = node(ref).type == ChakraProtoMsg::COMM_SEND_NODE;
        f(ref, send ? r : peer, send ? peer : r);
      }
    }
  }

  // Ranks' topological orders interleaved by node id (ties: lower rank first).
  void add_ops() {
    size_t nodes = 0, deps = 0;
    for (RankId r = 0; r < tables_.size(); ++r) {
      nodes += tables_[r].nodes.size();
      deps += orders_[r].deps.size();
      op_of_.emplace_back(tables_[r].nodes.size(), kNoOp);
    }
    trace_.graph.reserve(nodes, deps);
    trace_.node_id.reserve(nodes);
    elided_deps_.resize(tables_.size());
    using Entry = std::pair<uint64_t, RankId>;  // (node id, rank)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> next;
    std::vector<size_t> cursor(tables_.size(), 0);
    for (RankId r = 0; r < tables_.size(); ++r) {
      if (!orders_[r].order.empty()) next.emplace(tables_[r].nodes[orders_[r].order[0]].id, r);
    }
    while (!next.empty()) {
      const RankId r = next.top().second;
      next.pop();
      add_node({r, orders_[r].order[cursor[r]]});
      if (++cursor[r] < orders_[r].order.size()) {
        next.emplace(tables_[r].nodes[orders_[r].order[cursor[r]]].id, r);
      }
    }
  }

  std::vector<OpId> resolved_deps(NodeRef r) const {
    std::vector<OpId> deps;
    const RankOrder& order = orders_[r.rank];
    for (uint64_t k = order.deps_begin(r.index); k < order.dep_end[r.index]; ++k) {
      const uint32_t d = order.deps[k];
      const OpId op = op_of_[r.rank][d];
      if (op != kNoOp) {
        deps.push_back(op);
      } else {  // a no-op node: its own dependencies stand in for it
        const auto& inherited = elided_deps_[r.rank].at(d);
        deps.insert(deps.end(), inherited.begin(), inherited.end());
      }
    }
    remove_repeats(deps, 0);
    return deps;
  }

  void add_node(NodeRef r) {
    const TraceNode& n = node(r);
    ++trace_.summary.nodes;
    ++trace_.summary.by_type[n.type == kUnknownType ? 0 : n.type];
    std::vector<OpId> deps = resolved_deps(r);
    if (is_elided(n.type)) {
      if (n.type != ChakraProtoMsg::METADATA_NODE) ++trace_.summary.unknown_type;
      elided_deps_[r.rank][r.index] = std::move(deps);
      return;
    }
    Op op = base_op(r);
    if (n.type == ChakraProtoMsg::COMM_COLL_NODE && !n.has(kCpuOp)) {
      make_collective(r, op);
    } else if (is_p2p(n.type)) {
      make_p2p(r, op);
    } else {
      make_compute(r, op);
    }
    op_of_[r.rank][r.index] = trace_.graph.add(op, deps);
    trace_.node_id.push_back(n.id);
  }

  Op base_op(NodeRef r) {
    const TraceNode& n = node(r);
    Op op;
    op.rank = r.rank;
    op.label = label(n.name);
    op.layer = n.layer;
    op.micro_batch = n.micro_batch;
    op.phase = n.phase != kUnset ? static_cast<Phase>(n.phase) : Phase::kForward;
    return op;
  }

  uint32_t label(uint32_t name) {
    auto [it, inserted] = labels_.try_emplace(name, 0);
    if (inserted) it->second = trace_.graph.intern_label(names_.get(name));
    return it->second;
  }

  StreamId stream(const TraceNode& n, const std::string& fallback, StreamKind kind) {
    const std::string& name = n.stream != kNoName ? names_.get(n.stream) : fallback;
    try {
      return trace_.graph.add_stream(name, kind);
    } catch (const std::length_error&) {
      throw trace_error(tables_[0].file,
                        "more than 255 streams (process groups): racksim cannot replay this many");
    }
  }

  // racksim's host <-> device copy.
  void make_copy(NodeRef r, Op& op) {
    const TraceNode& n = node(r);
    op.kind = OpKind::kCopy;
    op.amount = n.tensor_bytes;
    op.peer = n.numa;
    op.copy_direction = static_cast<CopyDirection>(n.copy_direction);
    op.duration_s = n.has(kModelled) || !n.has(kHasDuration) ? -1 : n.duration_s;
    op.stream = stream(n, "copy", StreamKind::kCopy);
  }

  void make_compute(NodeRef r, Op& op) {
    const TraceNode& n = node(r);
    if (n.copy_direction != kUnset) {
      make_copy(r, op);
      return;
    }
    const bool host = n.has(kCpuOp);
    op.kind = OpKind::kCompute;
    op.amount = n.flops;
    op.hbm_bytes = n.tensor_bytes;
    op.dtype = n.dtype != kUnset ? static_cast<DataType>(n.dtype) : DataType::kBf16;
    // Without racksim's class: FLOPs make it a GEMM-like kernel, none a memory-bound one.
    op.op_class = n.op_class != kUnset ? static_cast<OpClass>(n.op_class)
                  : n.flops > 0        ? OpClass::kGemm
                                       : OpClass::kElementwise;
    if (host) {
      op.phase = n.phase != kUnset ? op.phase : Phase::kOther;
      op.duration_s = n.duration_s;
      op.stream = stream(n, "cpu", StreamKind::kHost);
      ++trace_.summary.cpu_ops;
      return;
    }
    if (n.type != ChakraProtoMsg::COMP_NODE) ++trace_.summary.memory_ops;
    op.duration_s = gpu_duration(n);
    (op.duration_s < 0 ? trace_.summary.timed_model : trace_.summary.timed_recorded)++;
    trace_.summary.num_ops += n.flops;
    op.stream = stream(n, "compute", StreamKind::kCompute);
  }

  // < 0: timed by the compute model.
  double gpu_duration(const TraceNode& n) const {
    const bool modelable = n.has(kHasFlops) || n.has(kHasTensorSize);
    if (n.has(kModelled)) return -1;
    if (compute_ == ComputeSource::kRecorded) {
      return n.has(kHasDuration) || !modelable ? n.duration_s : -1;
    }
    return modelable ? -1 : n.duration_s;
  }

  void make_collective(NodeRef r, Op& op) {
    const TraceNode& n = node(r);
    if (!n.has(kHasCommType) && n.collective == kUnset) note_missing(r, "comm_type");
    if (!n.has(kHasCommSize)) note_missing(r, "comm_size");
    op.kind = OpKind::kCollective;
    op.collective = n.collective != kUnset ? static_cast<CollectiveKind>(n.collective)
                                           : collective_of(n.comm_type);
    const CommId comm = communicator(r);
    op.peer = comm;
    const auto& members = trace_.graph.communicator(comm);
    if (!std::binary_search(members.begin(), members.end(), r.rank)) {
      fail(r, fmt::format("a collective on a communicator that does not include rank {}", r.rank));
    }
    op.amount = n.comm_bytes;
    // Chakra's (ASTRA-sim's) all-gather size is what each rank contributes; racksim counts
    // the gathered buffer (nccl-tests convention).
    if (op.collective == CollectiveKind::kAllGather && !n.has(kExactBytes)) {
      op.amount *= static_cast<double>(members.size());
    }
    op.dim = n.dim != kUnset ? static_cast<CommDim>(n.dim) : group_dim(n);
    if (n.weights != 0) {
      const auto& table = trace_.graph.weights(declared_weights_.at(n.weights));
      if (op.collective != CollectiveKind::kAllToAll ||
          weighted_all_to_all_members(table) != members.size()) {
        fail(r, fmt::format("weights table {} needs an all-to-all over {} members", n.weights,
                            weighted_all_to_all_members(table)));
      }
      op.weights = declared_weights_.at(n.weights);
    }
    const std::string pg = n.pg != kNoName ? names_.get(n.pg) : "";
    op.stream = stream(n, pg.empty() ? "comm" : "comm." + pg, StreamKind::kComm);
    note_group(comm, n, op.dim);
  }

  void note_missing(NodeRef r, const char* field) {
    if (++trace_.summary.missing_comm_fields <= kListed) {
      trace_.warnings.push_back(fmt::format(
          "{}: collective without '{}'; replayed as {}", where(r), field,
          std::string_view(field) == "comm_type" ? "an all-reduce" : "0 bytes (a rendezvous)"));
    }
  }

  CommDim group_dim(const TraceNode& n) const {
    return n.pg != kNoName ? dim_of_group_name(names_.get(n.pg)) : CommDim::kOther;
  }

  CommId communicator(NodeRef r) {
    const TraceNode& n = node(r);
    if (n.comm >= 0) {
      const auto it = declared_comm_.find(static_cast<uint32_t>(n.comm));
      if (it == declared_comm_.end()) {
        fail(r, fmt::format("racksim_comm {} is not declared in the GlobalMetadata", n.comm));
      }
      return it->second;
    }
    if (n.pg == kNoName) {
      if (!all_ranks_) {
        std::vector<RankId> all(tables_.size());
        for (RankId k = 0; k < all.size(); ++k) all[k] = k;
        all_ranks_ = trace_.graph.add_communicator(std::move(all));
      }
      return *all_ranks_;
    }
    auto [it, inserted] = comm_of_group_.try_emplace(n.pg, 0);
    if (inserted) {
      const auto& members = group_members_[n.pg];
      it->second = trace_.graph.add_communicator({members.begin(), members.end()});
    }
    return it->second;
  }

  void note_group(CommId comm, const TraceNode& n, CommDim dim) {
    if (!groups_seen_.insert(comm).second) return;
    std::string name =
        n.pg != kNoName ? names_.get(n.pg) : group_label(trace_.graph.communicator(comm));
    trace_.groups.push_back({std::move(name), dim, comm});
  }

  void make_p2p(NodeRef r, Op& op) {
    const TraceNode& n = node(r);
    if (!n.has(kHasCommSize)) note_missing(r, "comm_size");
    op.kind = n.type == ChakraProtoMsg::COMM_SEND_NODE ? OpKind::kSend : OpKind::kRecv;
    op.peer = peer_of(r);
    op.tag = tags_[r.rank][r.index];
    op.amount = n.comm_bytes;
    op.dim = n.dim != kUnset ? static_cast<CommDim>(n.dim) : group_dim(n);
    const std::string pg = n.pg != kNoName ? names_.get(n.pg) : "";
    op.stream = stream(n, pg.empty() ? "comm.p2p" : "comm." + pg, StreamKind::kComm);
  }

  void check_point_to_point() const {
    const PointToPointMatch match = match_point_to_point(trace_.graph);
    if (match.unmatched.empty() && match.size_mismatches.empty()) return;
    std::vector<std::string> lines;
    for (OpId id : match.unmatched) {
      if (lines.size() == kListed) break;
      const Op& op = trace_.graph.op(id);
      const bool send = op.kind == OpKind::kSend;
      lines.push_back(fmt::format("{} ({} rank {}, tag {}, {} bytes) has no matching {} in {}",
                                  where_op(id), send ? "send to" : "recv from", op.peer, op.tag,
                                  op.amount, send ? "recv" : "send", tables_[op.peer].file));
    }
    for (const auto& [send, recv] : match.size_mismatches) {
      if (lines.size() == kListed) break;
      lines.push_back(fmt::format("{} sends {} bytes to {}, which receives {}", where_op(send),
                                  trace_.graph.op(send).amount, where_op(recv),
                                  trace_.graph.op(recv).amount));
    }
    const size_t total = match.unmatched.size() + match.size_mismatches.size();
    throw trace_error(
        tables_[0].file,
        fmt::format(
            "{} send/recv node(s) do not match across ranks by (source, "
            "destination, tag, size):\n  {}{}",
            total, fmt::join(lines, "\n  "),
            total > lines.size() ? fmt::format("\n  and {} more", total - lines.size()) : ""));
  }

  void check_collectives() const {
    const auto problems = collective_problems(trace_.graph);
    if (problems.empty()) return;
    const CollectiveProblem& p = problems.front();
    const Op& first = trace_.graph.op(p.first);
    const std::string group = group_name(first.peer);
    if (p.other != kNoOp) {
      const Op& other = trace_.graph.op(p.other);
      throw trace_error(
          trace_.files[other.rank],
          fmt::format("collective #{} on process group {}: {} is {} of {} bytes but "
                      "{} is {} of {} bytes",
                      first.tag + 1, group, where_op(p.first), to_string(first.collective),
                      first.amount, where_op(p.other), to_string(other.collective), other.amount));
    }
    throw trace_error(
        trace_.files[first.rank],
        fmt::format("collective #{} on process group {} ({}, ranks {}) is issued "
                    "by {} of its {} members; the others' traces have fewer "
                    "collectives on it",
                    first.tag + 1, group, where_op(p.first),
                    fmt::join(trace_.graph.communicator(first.peer), ","), p.issued, p.members));
  }

  std::string group_name(CommId comm) const {
    for (const ProcessGroup& g : trace_.groups) {
      if (g.comm == comm) return "'" + g.name + "'";
    }
    return fmt::format("{}", comm);
  }

  void summarize() {
    for (const RankOrder& o : orders_) {
      trace_.summary.dangling_deps += o.dangling;
      trace_.summary.ctrl_dangling += o.ctrl_dangling;
    }
    for (const RankTable& t : tables_) trace_.summary.ctrl_deps += t.ctrl_deps.size();
  }

  const std::vector<RankTable>& tables_;
  const Interner& names_;
  ComputeSource compute_;
  ChakraTrace trace_;
  std::vector<RankOrder> orders_;
  std::vector<std::vector<OpId>> op_of_;  // per rank and node index
  std::vector<std::unordered_map<uint32_t, std::vector<OpId>>> elided_deps_;
  std::vector<std::vector<uint32_t>> tags_;  // per rank and node index (p2p nodes)
  std::map<std::pair<std::tuple<RankId, RankId, uint32_t>, double>, uint32_t> retag_;
  std::map<uint32_t, CommId> declared_comm_;
  std::map<uint32_t, uint32_t> declared_weights_;  // id in the files -> id in the graph
  std::map<uint32_t, std::set<RankId>> group_members_;
  std::map<uint32_t, CommId> comm_of_group_;
  std::optional<CommId> all_ranks_;
  std::set<CommId> groups_seen_;
  std::unordered_map<uint32_t, uint32_t> labels_;  // node name -> graph label
};

}  // namespace

ChakraTrace build_trace_graph(const std::vector<RankTable>& tables, const Interner& names,
                              ComputeSource compute, std::vector<std::string> warnings) {
  return TraceGraphBuilder(tables, names, compute, std::move(warnings)).build();
}

CommDim dim_of_group_name(std::string_view name) {
  std::string token;
  auto match = [](const std::string& t) -> std::optional<CommDim> {
    if (t == "tp" || t == "tensor") return CommDim::kTp;
    if (t == "cp" || t == "context") return CommDim::kCp;
    if (t == "ep" || t == "expert" || t == "moe") return CommDim::kEp;
    if (t == "pp" || t == "pipeline" || t == "pipe") return CommDim::kPp;
    if (t == "dp" || t == "data" || t == "fsdp") return CommDim::kDp;
    return std::nullopt;
  };
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i < name.size() && std::isalpha(static_cast<unsigned char>(name[i]))) {
      token += static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
      continue;
    }
    if (const auto dim = match(token)) return *dim;
    token.clear();
  }
  return CommDim::kOther;
}

}  // namespace racksim::chakra
