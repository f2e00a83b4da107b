#include "traces/chakra_trace.h"

#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"
#include "traces/chakra_attributes.h"

namespace racksim::chakra {

namespace {

using Attr = ChakraProtoMsg::AttributeProto;

// Beyond these a value is not a measurement but corruption: 1 PiB in one message or tensor,
// 1e20 FLOPs in one kernel (a day of a 1 PFLOP/s GPU), a kernel of more than a day.
constexpr double kMaxBytes = 1125899906842624.0;  // 2^50
constexpr double kMaxFlops = 1e20;
constexpr uint64_t kMaxDurationMicros = 86'400'000'000ULL;
constexpr int64_t kMaxRank = 1 << 24;
constexpr size_t kWarningsPerKind = 5;

template <typename E>
std::optional<E> enum_from_string(std::string_view s, int count) {
  for (int i = 0; i < count; ++i) {
    if (to_string(static_cast<E>(i)) == s) return static_cast<E>(i);
  }
  return std::nullopt;
}

}  // namespace

uint32_t Interner::intern(std::string_view s) {
  auto [it, inserted] = ids_.try_emplace(std::string(s), static_cast<uint32_t>(strings_.size()));
  if (inserted) strings_.emplace_back(s);
  return it->second;
}

std::string_view copy_direction_name(CopyDirection direction) {
  return direction == CopyDirection::kHostToDevice ? "h2d" : "d2h";
}

RecordHandlers RankTableBuilder::handlers() {
  RecordHandlers h;
  h.metadata = [this](const ChakraProtoMsg::GlobalMetadata& m) { metadata(m); };
  h.node = [this](const ChakraProtoMsg::Node& n, const RecordPlace& p) { node(n, p); };
  h.warn = [this](const std::string& w) { warnings_.push_back(w); };
  return h;
}

namespace {

// Throws the InputError of one node: "file: node 17 (record 5): detail".
[[noreturn]] void fail(const std::string& file, uint64_t id, uint64_t record,
                       const std::string& detail) {
  throw InputError(SourceLocation{file, 0, 0}, "",
                   fmt::format("node {} (record {}): {}", id, record, detail));
}

}  // namespace

#define RACKSIM_FAIL(...) fail(table_.file, current_id_, current_record_, fmt::format(__VA_ARGS__))

void RankTableBuilder::node(const ChakraProtoMsg::Node& node, const RecordPlace& place) {
  current_id_ = node.id();
  current_record_ = place.index;
  exact_ = {};
  TraceNode n;
  n.id = node.id();
  n.record = static_cast<uint32_t>(std::min<uint64_t>(place.index, UINT32_MAX));
  n.name = names_.intern(node.name());
  check_node_type(node, n);
  if (node.duration_micros() > kMaxDurationMicros) {
    RACKSIM_FAIL("duration_micros = {} is absurd (more than a day)", node.duration_micros());
  }
  if (node.duration_micros() > 0) {
    n.duration_s = static_cast<double>(node.duration_micros()) * 1e-6;
    n.flags |= kHasDuration;
  }
  table_.ctrl_deps.insert(table_.ctrl_deps.end(), node.ctrl_deps().begin(), node.ctrl_deps().end());
  table_.deps.insert(table_.deps.end(), node.data_deps().begin(), node.data_deps().end());
  n.deps_end = table_.deps.size();
  weights_.clear();
  for (const Attr& a : node.attr()) attribute(a, n);
  file_weights(n);
  table_.nodes.push_back(n);
}

void RankTableBuilder::file_weights(const TraceNode& n) {
  if (n.weights == 0 && weights_.empty()) return;
  if (n.weights == 0 || weights_.size() < 2) {
    RACKSIM_FAIL("'{}' and '{}' (mode and at least one share) go together", attr::kWeightsId,
                 attr::kWeights);
  }
  if (weights_[0] != 0 && weights_[0] != 1)
    RACKSIM_FAIL("'{}' has an unknown mode", attr::kWeights);
  auto [it, inserted] = table_.weights.try_emplace(n.weights, weights_);
  if (!inserted && it->second != weights_) {
    RACKSIM_FAIL("weights table {} differs from an earlier node's", n.weights);
  }
}

void RankTableBuilder::check_node_type(const ChakraProtoMsg::Node& node, TraceNode& n) {
  const int type = static_cast<int>(node.type());
  if (type >= ChakraProtoMsg::METADATA_NODE && type <= ChakraProtoMsg::COMM_COLL_NODE) {
    n.type = static_cast<uint8_t>(type);
    return;
  }
  n.type = kUnknownType;
  if (++unknown_types_ <= kWarningsPerKind) {
    warnings_.push_back(fmt::format(
        "{}: node {} (record {}) has node type {} ({}); it is replayed as a no-op: what depends "
        "on it waits for its dependencies",
        table_.file, node.id(), current_record_, type,
        type == 0 ? "INVALID_NODE" : "not a Chakra NodeType"));
  }
}

void RankTableBuilder::attribute(const Attr& a, TraceNode& n) {
  const std::string& name = a.name();
  auto size = [&](double max) {
    const auto v = number_value(a);
    if (!v) RACKSIM_FAIL("attribute '{}' holds {}, expected a number", name, value_kind(a));
    if (*v < 0) RACKSIM_FAIL("attribute '{}' = {} is negative", name, *v);
    if (*v > max) RACKSIM_FAIL("attribute '{}' = {:g} is absurd (more than {:g})", name, *v, max);
    return *v;
  };
  if (name == "is_cpu_op") {
    const auto v = bool_value(a);
    if (!v) RACKSIM_FAIL("attribute 'is_cpu_op' holds {}, expected a bool", value_kind(a));
    n.flags = *v ? (n.flags | kCpuOp) : (n.flags & ~kCpuOp);
  } else if (name == "num_ops") {
    const double v = size(kMaxFlops);
    if (!exact_.flops) n.flops = v;
    n.flags |= kHasFlops;
  } else if (name == "tensor_size") {
    const double v = size(kMaxBytes);
    if (!exact_.hbm_bytes) n.tensor_bytes = v;
    n.flags |= kHasTensorSize;
  } else if (name == "comm_size") {
    const double v = size(kMaxBytes);
    if (!exact_.bytes) n.comm_bytes = v;
    n.flags |= kHasCommSize;
  } else if (name.rfind("comm_", 0) == 0 || name == "pg_name") {
    comm_attribute(a, n);
  } else if (name.rfind("racksim_", 0) == 0) {
    racksim_attribute(a, n);
  }
}

// The communication attributes of Chakra's collective and point-to-point nodes.
void RankTableBuilder::comm_attribute(const Attr& a, TraceNode& n) {
  const std::string& name = a.name();
  auto integer = [&]() {
    const auto v = integer_value(a);
    if (!v) RACKSIM_FAIL("attribute '{}' holds {}, expected an integer", name, value_kind(a));
    return *v;
  };
  auto rank = [&]() {
    const int64_t v = integer();
    if (v < 0 || v >= kMaxRank) RACKSIM_FAIL("attribute '{}' = {} is not a rank", name, v);
    return static_cast<int32_t>(v);
  };
  if (name == "comm_type") {
    const int64_t v = integer();
    if (v < 0 || v > ChakraProtoMsg::BARRIER) {
      RACKSIM_FAIL("attribute 'comm_type' = {} is not a CollectiveCommType (0..9)", v);
    }
    n.comm_type = static_cast<int8_t>(v);
    n.flags |= kHasCommType;
  } else if (name == "comm_src") {
    n.comm_src = rank();
  } else if (name == "comm_dst") {
    n.comm_dst = rank();
  } else if (name == "comm_tag") {
    const int64_t v = integer();
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<uint32_t>::max()) {
      RACKSIM_FAIL("attribute 'comm_tag' = {} is out of range", v);
    }
    n.tag = static_cast<uint32_t>(v);  // int32 tags written from uint32 come back whole
  } else if (name == "pg_name") {
    if (const std::string* s = string_value(a)) {
      n.pg = names_.intern(*s);
    } else if (const auto v = integer_value(a)) {
      n.pg = names_.intern(std::to_string(*v));
    } else {
      RACKSIM_FAIL("attribute 'pg_name' holds {}, expected a string", value_kind(a));
    }
  }
}

// racksim's labels of a node: its stream, phase, classes and kinds, by name.
bool RankTableBuilder::racksim_label_attribute(const Attr& a, TraceNode& n) {
  const std::string& name = a.name();
  auto text = [&]() -> const std::string& {
    const std::string* s = string_value(a);
    if (s == nullptr)
      RACKSIM_FAIL("attribute '{}' holds {}, expected a string", name, value_kind(a));
    return *s;
  };
  auto named = [&](auto parsed) {
    if (!parsed) RACKSIM_FAIL("attribute '{}' = '{}' is not a known value", name, text());
    return static_cast<uint8_t>(*parsed);
  };
  if (name == attr::kStream) {
    n.stream = names_.intern(text());
  } else if (name == attr::kPhase) {
    n.phase = named(enum_from_string<Phase>(text(), 6));
  } else if (name == attr::kOpClass) {
    n.op_class = named(enum_from_string<OpClass>(text(), 5));
  } else if (name == attr::kDtype) {
    n.dtype = named(enum_from_string<DataType>(text(), 4));
  } else if (name == attr::kDim) {
    n.dim = named(enum_from_string<CommDim>(text(), kNumCommDims));
  } else if (name == attr::kCollective) {
    n.collective = named(enum_from_string<CollectiveKind>(text(), 7));
  } else if (name == attr::kCopyDirection) {
    const std::string& s = text();
    if (s != "h2d" && s != "d2h") RACKSIM_FAIL("attribute '{}' = '{}' is not h2d or d2h", name, s);
    n.copy_direction = static_cast<uint8_t>(s == "h2d" ? CopyDirection::kHostToDevice
                                                       : CopyDirection::kDeviceToHost);
  } else {
    return false;
  }
  return true;
}

// racksim's attributes: exact figures and labels that Chakra's own fields cannot carry.
void RankTableBuilder::racksim_attribute(const Attr& a, TraceNode& n) {
  if (racksim_label_attribute(a, n)) return;
  const std::string& name = a.name();
  auto number = [&](double lo, double hi) {
    const auto v = number_value(a);
    if (!v || *v < lo || *v > hi) RACKSIM_FAIL("attribute '{}' is missing or out of range", name);
    return *v;
  };
  if (name == attr::kLayer) {
    n.layer = static_cast<int16_t>(number(-1, std::numeric_limits<int16_t>::max()));
  } else if (name == attr::kMicroBatch) {
    n.micro_batch = static_cast<int32_t>(number(-1, std::numeric_limits<int32_t>::max()));
  } else if (name == attr::kComm) {
    n.comm = static_cast<int32_t>(number(0, std::numeric_limits<int32_t>::max()));
  } else if (name == attr::kWeightsId) {
    n.weights = static_cast<uint32_t>(number(1, std::numeric_limits<int32_t>::max()));
  } else if (name == attr::kWeights) {
    if (a.value_case() != Attr::kDoubleList)
      RACKSIM_FAIL("attribute '{}' is not a double_list", name);
    for (double w : a.double_list().values()) {
      if (!std::isfinite(w) || w < 0) RACKSIM_FAIL("attribute '{}' holds {}", name, w);
      weights_.push_back(w);
    }
  } else if (name == attr::kNuma) {
    n.numa = static_cast<uint32_t>(number(0, std::numeric_limits<int32_t>::max()));
  } else if (name == attr::kRecorded) {
    const auto v = bool_value(a);
    if (!v) RACKSIM_FAIL("attribute '{}' holds {}, expected a bool", name, value_kind(a));
    n.flags = *v ? (n.flags & ~kModelled) : (n.flags | kModelled);
  } else if (name == attr::kDurationS) {
    n.duration_s = number(0, static_cast<double>(kMaxDurationMicros) * 1e-6);
    n.flags |= kHasDuration;
  } else if (name == attr::kFlops) {
    n.flops = number(0, kMaxFlops);
    exact_.flops = true;
    n.flags |= kHasFlops;
  } else if (name == attr::kBytes) {
    n.comm_bytes = number(0, kMaxBytes);
    exact_.bytes = true;
    n.flags |= kHasCommSize | kExactBytes;
  } else if (name == attr::kHbmBytes) {
    n.tensor_bytes = number(0, kMaxBytes);
    exact_.hbm_bytes = true;
    n.flags |= kHasTensorSize;
  }
}

#undef RACKSIM_FAIL

void RankTableBuilder::metadata(const ChakraProtoMsg::GlobalMetadata& metadata) {
  for (const Attr& a : metadata.attr()) {
    if (a.name().rfind("racksim_", 0) == 0) metadata_attribute(a);
  }
}

void RankTableBuilder::metadata_attribute(const Attr& a) {
  auto bad = [&](const std::string& what) {
    return InputError(SourceLocation{table_.file, 0, 0}, "",
                      fmt::format("GlobalMetadata: attribute '{}' {}", a.name(), what));
  };
  if (a.name() == attr::kStreams) {
    if (a.value_case() != Attr::kStringList) throw bad("is not a string_list");
    for (const auto& name : a.string_list().values())
      table_.streams.emplace_back(name, StreamKind::kCompute);
  } else if (a.name() == attr::kStreamKinds) {
    if (a.value_case() != Attr::kInt64List) throw bad("is not an int64_list");
    if (a.int64_list().values_size() != static_cast<int>(table_.streams.size())) {
      throw bad("does not match racksim_streams (write racksim_streams first, as many kinds)");
    }
    for (int i = 0; i < a.int64_list().values_size(); ++i) {
      const int64_t kind = a.int64_list().values(i);
      if (kind < 0 || kind > static_cast<int64_t>(StreamKind::kHost))
        throw bad("has an unknown kind");
      table_.streams[i].second = static_cast<StreamKind>(kind);
    }
  } else if (a.name() == attr::kCommunicator) {
    if (a.value_case() != Attr::kInt64List || a.int64_list().values_size() < 2) {
      throw bad("is not an int64_list [id, member, ...]");
    }
    const auto& v = a.int64_list().values();
    if (v[0] < 0 || v[0] > std::numeric_limits<int32_t>::max()) throw bad("has a bad id");
    std::vector<RankId> members;
    for (int i = 1; i < v.size(); ++i) {
      if (v[i] < 0 || v[i] >= kMaxRank) throw bad("has a member that is not a rank");
      members.push_back(static_cast<RankId>(v[i]));
    }
    table_.communicators.emplace_back(static_cast<uint32_t>(v[0]), std::move(members));
  }
}

}  // namespace racksim::chakra
