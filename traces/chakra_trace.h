// One rank's Chakra trace in compact form: what the reader keeps of each node (a few dozen
// bytes, not the protobuf message), checked attribute by attribute as it is read.
//
// Shared by the ET and JSON readers (both feed nodes through RankTableBuilder) and by the
// graph builder (traces/chakra_build.h). The names racksim adds to what Chakra defines are
// here too, so that the writer and the reader agree on them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph/event_graph.h"
#include "proto/chakra_et.pb.h"
#include "traces/chakra_records.h"

namespace racksim::chakra {

// Attributes racksim writes beside Chakra's own: a Chakra reader ignores them; racksim's
// reader uses them to rebuild its event graph exactly.
namespace attr {
inline constexpr std::string_view kStream = "racksim_stream";  // stream name
inline constexpr std::string_view kPhase = "racksim_phase";    // "forward", "backward", ...
inline constexpr std::string_view kLayer = "racksim_layer";
inline constexpr std::string_view kMicroBatch = "racksim_micro_batch";
inline constexpr std::string_view kOpClass = "racksim_op_class";       // "gemm", "attention", ...
inline constexpr std::string_view kDtype = "racksim_dtype";            // "bf16", ...
inline constexpr std::string_view kDim = "racksim_dim";                // "tp", "dp", ...
inline constexpr std::string_view kComm = "racksim_comm";              // communicator id
inline constexpr std::string_view kCollective = "racksim_collective";  // kind, exact
// false: duration_micros is a compute-model estimate written for other tools, and racksim
// times the op with its own compute model again.
inline constexpr std::string_view kRecorded = "racksim_duration_recorded";
inline constexpr std::string_view kDurationS = "racksim_duration_s";          // exact seconds
inline constexpr std::string_view kFlops = "racksim_flops";                   // exact FLOPs
inline constexpr std::string_view kBytes = "racksim_bytes";                   // exact bytes
inline constexpr std::string_view kHbmBytes = "racksim_hbm_bytes";            // exact HBM bytes
inline constexpr std::string_view kCopyDirection = "racksim_copy_direction";  // "h2d"/"d2h"
inline constexpr std::string_view kNuma = "racksim_numa";
// An uneven all-to-all's weights table (EventGraph::add_weights): its id in the graph, and the
// table itself (a double_list: mode, then one share per member).
inline constexpr std::string_view kWeightsId = "racksim_weights_id";
inline constexpr std::string_view kWeights = "racksim_weights";
// GlobalMetadata: the graph's streams in id order, and the communicators holding the rank
// (one attribute each: [id, member, member, ...]).
inline constexpr std::string_view kStreams = "racksim_streams";
inline constexpr std::string_view kStreamKinds = "racksim_stream_kinds";
inline constexpr std::string_view kCommunicator = "racksim_communicator";
}  // namespace attr

inline constexpr uint32_t kNoName = UINT32_MAX;
inline constexpr uint8_t kUnset = 0xff;
inline constexpr uint8_t kUnknownType = 0xff;

// Strings interned once for all ranks (node names, process groups, stream names).
class Interner {
 public:
  uint32_t intern(std::string_view s);
  const std::string& get(uint32_t id) const { return strings_[id]; }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> strings_;
};

enum NodeFlag : uint16_t {
  kCpuOp = 1,           // is_cpu_op
  kHasDuration = 2,     // duration_micros > 0 or racksim_duration_s
  kModelled = 4,        // racksim_duration_recorded = false
  kHasFlops = 8,        // num_ops
  kHasTensorSize = 16,  // tensor_size
  kHasCommSize = 32,    // comm_size
  kHasCommType = 64,    // comm_type
  kExactBytes = 128,    // racksim_bytes: comm_bytes is racksim's exact figure, not comm_size
};

struct TraceNode {
  uint64_t id = 0;
  uint64_t deps_end = 0;    // data_deps are RankTable::deps[previous node's deps_end, deps_end)
  double duration_s = 0;    // recorded (duration_micros, or racksim's exact seconds)
  double flops = 0;         // num_ops
  double tensor_bytes = 0;  // tensor_size
  double comm_bytes = 0;    // comm_size (racksim's exact bytes when present)
  uint32_t record = 0;      // position in the file, for messages
  uint32_t name = kNoName;
  uint32_t pg = kNoName;      // pg_name
  uint32_t stream = kNoName;  // racksim_stream
  int32_t comm_src = -1;
  int32_t comm_dst = -1;
  uint32_t tag = 0;
  int32_t comm = -1;     // racksim_comm
  uint32_t weights = 0;  // racksim_weights_id (0: none)
  int32_t micro_batch = -1;
  uint32_t numa = 0;
  int16_t layer = -1;
  uint16_t flags = 0;
  uint8_t type = 0;  // ChakraProtoMsg::NodeType, kUnknownType for values it does not define
  int8_t comm_type = -1;
  uint8_t phase = kUnset;
  uint8_t op_class = kUnset;
  uint8_t dtype = kUnset;
  uint8_t dim = kUnset;
  uint8_t collective = kUnset;  // racksim_collective (a CollectiveKind)
  uint8_t copy_direction = kUnset;

  bool has(NodeFlag f) const { return (flags & f) != 0; }
};

struct RankTable {
  std::string file;
  std::vector<TraceNode> nodes;
  std::vector<uint64_t> deps;       // data_deps ids, node after node
  std::vector<uint64_t> ctrl_deps;  // call-tree parents: checked, not scheduling edges
  // racksim's metadata, empty for traces other tools wrote.
  std::vector<std::pair<std::string, StreamKind>> streams;
  std::vector<std::pair<uint32_t, std::vector<RankId>>> communicators;
  std::map<uint32_t, std::vector<double>> weights;  // racksim's all-to-all tables by id
};

// Checks each node's fields and attributes as it is read and appends it to a RankTable.
// Throws InputError naming the file and node for fatal problems (negative or absurd sizes,
// wrong attribute kinds, bad enum values); notes the rest in `warnings`.
class RankTableBuilder {
 public:
  RankTableBuilder(RankTable& table, Interner& names, std::vector<std::string>& warnings)
      : table_(table), names_(names), warnings_(warnings) {}

  void metadata(const ChakraProtoMsg::GlobalMetadata& metadata);
  void node(const ChakraProtoMsg::Node& node, const RecordPlace& place);
  RecordHandlers handlers();

 private:
  void attribute(const ChakraProtoMsg::AttributeProto& a, TraceNode& n);
  void comm_attribute(const ChakraProtoMsg::AttributeProto& a, TraceNode& n);
  void racksim_attribute(const ChakraProtoMsg::AttributeProto& a, TraceNode& n);
  bool racksim_label_attribute(const ChakraProtoMsg::AttributeProto& a, TraceNode& n);
  void metadata_attribute(const ChakraProtoMsg::AttributeProto& a);
  void check_node_type(const ChakraProtoMsg::Node& node, TraceNode& n);
  void file_weights(const TraceNode& n);

  RankTable& table_;
  Interner& names_;
  std::vector<std::string>& warnings_;
  uint64_t current_id_ = 0;
  uint64_t current_record_ = 0;
  struct {
    bool flops = false, bytes = false, hbm_bytes = false;
  } exact_;
  std::vector<double>
      weights_;  // this node's racksim_weights, filed under its id at the end  // racksim's exact
                 // values seen on this node: Chakra's rounded ones do not replace them
  size_t unknown_types_ = 0;
};

// Names of the CopyDirection values in racksim's attributes.
std::string_view copy_direction_name(CopyDirection direction);

}  // namespace racksim::chakra
