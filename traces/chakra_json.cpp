#include "traces/chakra_json.h"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace racksim::chakra {

namespace {

using nlohmann::json;

InputError json_error(const std::string& file, const std::string& detail) {
  return InputError(SourceLocation{file, 0, 0}, "", detail);
}

uint64_t unsigned_field(const json& node, const char* key, const std::string& file, size_t index) {
  const json& v = node.at(key);
  if (!v.is_number_unsigned()) {
    throw json_error(file, fmt::format("workload_graph[{}]: '{}' is {}, expected an unsigned "
                                       "integer",
                                       index, key, v.dump()));
  }
  return v.get<uint64_t>();
}

std::vector<uint64_t> id_list(const json& node, const char* key, const std::string& file,
                              size_t index) {
  std::vector<uint64_t> ids;
  if (!node.contains(key)) return ids;
  const json& list = node.at(key);
  if (!list.is_array()) {
    throw json_error(file, fmt::format("workload_graph[{}]: '{}' is not a list", index, key));
  }
  for (const json& id : list) {
    if (!id.is_number_unsigned()) {
      throw json_error(file, fmt::format("workload_graph[{}]: '{}' holds {}, expected node ids",
                                         index, key, id.dump()));
    }
    ids.push_back(id.get<uint64_t>());
  }
  return ids;
}

// A JSON value as the attribute a protobuf writer would have written; strings stay strings so
// that the attribute checks report a wrong kind in the usual words.
void add_attribute(ChakraProtoMsg::Node& node, const std::string& name, const json& v) {
  ChakraProtoMsg::AttributeProto* a = node.add_attr();
  a->set_name(name);
  if (v.is_boolean()) {
    a->set_bool_val(v.get<bool>());
  } else if (v.is_number_unsigned()) {
    a->set_uint64_val(v.get<uint64_t>());
  } else if (v.is_number_integer()) {
    a->set_int64_val(v.get<int64_t>());
  } else if (v.is_number_float()) {
    a->set_double_val(v.get<double>());
  } else if (v.is_string()) {
    a->set_string_val(v.get<std::string>());
  }  // lists and objects: left without a value, reported as such when the name matters
}

constexpr const char* kAttributeKeys[] = {"is_cpu_op", "num_ops",   "tensor_size",
                                          "comm_type", "comm_size", "comm_src",
                                          "comm_dst",  "comm_tag",  "pg_name"};

ChakraProtoMsg::Node to_node(const json& j, const std::string& file, size_t index) {
  if (!j.is_object()) {
    throw json_error(file, fmt::format("workload_graph[{}] is not an object", index));
  }
  ChakraProtoMsg::Node node;
  node.set_id(unsigned_field(j, "Id", file, index));
  if (j.contains("Name") && j.at("Name").is_string())
    node.set_name(j.at("Name").get<std::string>());
  const uint64_t type = unsigned_field(j, "NodeType", file, index);
  node.set_type(static_cast<ChakraProtoMsg::NodeType>(std::min<uint64_t>(type, INT32_MAX)));
  for (uint64_t d : id_list(j, "data_deps", file, index)) node.add_data_deps(d);
  for (const char* key : {"ctrl_deps", "ctrlDeps"}) {
    for (uint64_t d : id_list(j, key, file, index)) node.add_ctrl_deps(d);
  }
  if (j.contains("runtime")) node.set_duration_micros(unsigned_field(j, "runtime", file, index));
  for (const char* key : kAttributeKeys) {
    if (j.contains(key)) add_attribute(node, key, j.at(key));
  }
  return node;
}

}  // namespace

void read_json_file(const std::string& path, RankTableBuilder& builder) {
  std::ifstream in(path);
  if (!in) throw json_error(path, "cannot be opened");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {  // a syntax error, or a number too large for a double
    throw json_error(path, fmt::format("is not valid JSON: {}", e.what()));
  }
  if (!doc.is_object() || !doc.contains("workload_graph") || !doc["workload_graph"].is_array()) {
    throw json_error(path, "has no \"workload_graph\" list: not a Chakra JSON trace");
  }
  builder.metadata(ChakraProtoMsg::GlobalMetadata{});
  const json& nodes = doc["workload_graph"];
  for (size_t i = 0; i < nodes.size(); ++i) {
    try {
      builder.node(to_node(nodes[i], path, i), RecordPlace{i + 1, 0});
    } catch (const json::exception& e) {  // a required key missing
      throw json_error(path, fmt::format("workload_graph[{}]: {}", i, e.what()));
    }
  }
}

}  // namespace racksim::chakra
