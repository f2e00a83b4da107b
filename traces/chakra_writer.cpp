#include "traces/chakra_writer.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "proto/chakra_et.pb.h"
#include "traces/chakra_records.h"
#include "traces/chakra_trace.h"

namespace racksim::chakra {

namespace {

using Node = ChakraProtoMsg::Node;

constexpr double kLargestExactInteger = 9007199254740992.0;  // 2^53

ChakraProtoMsg::AttributeProto& add(Node& node, std::string_view name) {
  ChakraProtoMsg::AttributeProto* a = node.add_attr();
  a->set_name(std::string(name));
  return *a;
}

int64_t rounded(double value) {
  return static_cast<int64_t>(std::llround(std::clamp(value, 0.0, kLargestExactInteger)));
}

bool whole(double value) {
  return value >= 0 && value <= kLargestExactInteger && value == std::floor(value);
}

ChakraProtoMsg::CollectiveCommType comm_type_of(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return ChakraProtoMsg::ALL_REDUCE;
    case CollectiveKind::kAllGather:
      return ChakraProtoMsg::ALL_GATHER;
    case CollectiveKind::kReduceScatter:
      return ChakraProtoMsg::REDUCE_SCATTER;
    case CollectiveKind::kAllToAll:
      return ChakraProtoMsg::ALL_TO_ALL;
    case CollectiveKind::kBroadcast:
      return ChakraProtoMsg::BROADCAST;
    case CollectiveKind::kReduce:
      return ChakraProtoMsg::REDUCE;
    case CollectiveKind::kBarrier:
      return ChakraProtoMsg::BARRIER;
  }
  return ChakraProtoMsg::ALL_REDUCE;
}

class NodeEncoder {
 public:
  NodeEncoder(const EventGraph& graph, const WriteOptions& options)
      : graph_(graph), options_(options) {}

  const Node& encode(OpId id) {
    node_.Clear();
    const Op& op = graph_.op(id);
    node_.set_id(id);
    node_.set_name(graph_.label(op.label));
    for (OpId d : graph_.deps(id)) node_.add_data_deps(d);
    add(node_, "is_cpu_op").set_bool_val(graph_.streams()[op.stream].kind == StreamKind::kHost);
    switch (op.kind) {
      case OpKind::kCompute:
        compute(op);
        break;
      case OpKind::kCollective:
        collective(op);
        break;
      case OpKind::kSend:
      case OpKind::kRecv:
        point_to_point(op);
        break;
      case OpKind::kCopy:
        copy(op);
        break;
    }
    common(op);
    return node_;
  }

 private:
  void duration(const Op& op) {
    const bool recorded = op.duration_s >= 0;
    double seconds = op.duration_s;
    if (!recorded) seconds = options_.modelled_duration_s ? options_.modelled_duration_s(op) : 0;
    node_.set_duration_micros(static_cast<uint64_t>(rounded(seconds * 1e6)));
    add(node_, attr::kRecorded).set_bool_val(recorded);
    if (recorded) add(node_, attr::kDurationS).set_double_val(op.duration_s);
  }

  void compute(const Op& op) {
    node_.set_type(ChakraProtoMsg::COMP_NODE);
    duration(op);
    add(node_, "num_ops").set_int64_val(rounded(op.amount));
    add(node_, "tensor_size").set_uint64_val(static_cast<uint64_t>(rounded(op.hbm_bytes)));
    if (!whole(op.amount)) add(node_, attr::kFlops).set_double_val(op.amount);
    if (!whole(op.hbm_bytes)) add(node_, attr::kHbmBytes).set_double_val(op.hbm_bytes);
    add(node_, attr::kOpClass).set_string_val(std::string(to_string(op.op_class)));
    add(node_, attr::kDtype).set_string_val(std::string(to_string(op.dtype)));
  }

  void collective(const Op& op) {
    node_.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    const double members = static_cast<double>(graph_.communicator(op.peer).size());
    // ASTRA-sim reads an all-gather's comm_size as what each rank contributes.
    const double size =
        op.collective == CollectiveKind::kAllGather ? op.amount / members : op.amount;
    add(node_, "comm_type").set_int64_val(comm_type_of(op.collective));
    add(node_, "comm_size").set_int64_val(rounded(size));
    add(node_, "pg_name").set_string_val(std::to_string(op.peer));
    if (op.collective == CollectiveKind::kAllGather || !whole(op.amount)) {
      add(node_, attr::kBytes).set_double_val(op.amount);
    }
    add(node_, attr::kComm).set_int64_val(op.peer);
    add(node_, attr::kDim).set_string_val(std::string(to_string(op.dim)));
    if (op.weights != 0) {
      add(node_, attr::kWeightsId).set_int64_val(op.weights);
      auto* list = add(node_, attr::kWeights).mutable_double_list();
      for (double w : graph_.weights(op.weights)) list->add_values(w);
    }
  }

  void point_to_point(const Op& op) {
    const bool send = op.kind == OpKind::kSend;
    node_.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
    add(node_, "comm_src").set_int32_val(static_cast<int32_t>(send ? op.rank : op.peer));
    add(node_, "comm_dst").set_int32_val(static_cast<int32_t>(send ? op.peer : op.rank));
    add(node_, "comm_tag").set_int32_val(static_cast<int32_t>(op.tag));
    add(node_, "comm_size").set_int64_val(rounded(op.amount));
    if (!whole(op.amount)) add(node_, attr::kBytes).set_double_val(op.amount);
    add(node_, attr::kDim).set_string_val(std::string(to_string(op.dim)));
  }

  void copy(const Op& op) {
    const bool h2d = op.copy_direction == CopyDirection::kHostToDevice;
    node_.set_type(h2d ? ChakraProtoMsg::MEM_LOAD_NODE : ChakraProtoMsg::MEM_STORE_NODE);
    duration(op);
    add(node_, "tensor_size").set_uint64_val(static_cast<uint64_t>(rounded(op.amount)));
    if (!whole(op.amount)) add(node_, attr::kHbmBytes).set_double_val(op.amount);
    add(node_, attr::kCopyDirection)
        .set_string_val(std::string(copy_direction_name(op.copy_direction)));
    add(node_, attr::kNuma).set_int64_val(op.peer);
  }

  void common(const Op& op) {
    add(node_, attr::kStream).set_string_val(graph_.streams()[op.stream].name);
    add(node_, attr::kPhase).set_string_val(std::string(to_string(op.phase)));
    if (op.layer != -1) add(node_, attr::kLayer).set_int64_val(op.layer);
    if (op.micro_batch != -1) add(node_, attr::kMicroBatch).set_int64_val(op.micro_batch);
  }

  const EventGraph& graph_;
  const WriteOptions& options_;
  Node node_;  // reused from op to op
};

}  // namespace

ChakraWriter::ChakraWriter(const EventGraph& graph, WriteOptions options)
    : graph_(graph),
      options_(std::move(options)),
      ops_of_rank_(graph.num_ranks()),
      comms_of_rank_(graph.num_ranks()) {
  for (OpId id = 0; id < graph.size(); ++id) ops_of_rank_[graph.op(id).rank].push_back(id);
  for (CommId c = 0; c < graph.num_communicators(); ++c) {
    for (RankId r : graph.communicator(c)) comms_of_rank_[r].push_back(c);
  }
}

void ChakraWriter::write_rank(RankId rank, std::ostream& out) const {
  RecordWriter records(out);
  ChakraProtoMsg::GlobalMetadata metadata;
  metadata.set_version("0.0.4");
  auto& streams = *metadata.add_attr();
  streams.set_name(std::string(attr::kStreams));
  auto& kinds = *metadata.add_attr();
  kinds.set_name(std::string(attr::kStreamKinds));
  for (const StreamInfo& s : graph_.streams()) {
    streams.mutable_string_list()->add_values(s.name);
    kinds.mutable_int64_list()->add_values(static_cast<int64_t>(s.kind));
  }
  for (CommId c : comms_of_rank_[rank]) {
    auto& comm = *metadata.add_attr();
    comm.set_name(std::string(attr::kCommunicator));
    comm.mutable_int64_list()->add_values(c);
    for (RankId m : graph_.communicator(c)) comm.mutable_int64_list()->add_values(m);
  }
  records.write(metadata);
  NodeEncoder encoder(graph_, options_);
  for (OpId id : ops_of_rank_[rank]) records.write(encoder.encode(id));
}

std::string ChakraWriter::comm_groups_json() const {
  std::string out = "{\n";
  for (CommId c = 0; c < graph_.num_communicators(); ++c) {
    out += fmt::format("  \"{}\": [{}]{}\n", c, fmt::join(graph_.communicator(c), ", "),
                       c + 1 < graph_.num_communicators() ? "," : "");
  }
  return out + "}\n";
}

std::string rank_file_name(const std::string& prefix, RankId rank) {
  return fmt::format("{}.{}.et", prefix, rank);
}

}  // namespace racksim::chakra
