// Dotted field paths ("hardware.scale_up.bytes_per_s") over protobuf descriptors: the common
// language of the source map, the error messages and `--set`.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <string>
#include <string_view>
#include <vector>

namespace racksim::config {

std::vector<std::string> split_path(std::string_view path);
// "a.b" + "c" -> "a.b.c"; an empty prefix gives the name alone.
std::string join_path(std::string_view prefix, std::string_view name);
// "a.b.c" -> "a.b"; "a" -> "".
std::string parent_path(std::string_view path);

// The message type found by following `path` from `root`, or nullptr when a segment is unknown
// or names a scalar. The empty path gives `root`.
const google::protobuf::Descriptor* message_at(const google::protobuf::Descriptor* root,
                                               std::string_view path);

// "tp, pp, cp, ..." in declaration order, for "valid fields are" messages.
std::string field_names(const google::protobuf::Descriptor& message);
// "SWIGLU, GELU": the value names of an enum, leaving out the *_UNSPECIFIED placeholder.
std::string enum_value_names(const google::protobuf::EnumDescriptor& type);

// Sets the scalar `field` of `message` from its text form ("4", "0.5", "true", "FULL").
// Returns an empty string on success, else what is wrong with the value.
std::string set_scalar_from_string(const google::protobuf::FieldDescriptor& field,
                                   std::string_view value, google::protobuf::Message* message);

// Replaces the list of enum values `field` of `message` with the '+'-separated names of `value`
// ("LAYERNORM+MOE_ACT"; "" empties it). A comma would be a sweep's list of values.
std::string set_enum_list_from_string(const google::protobuf::FieldDescriptor& field,
                                      std::string_view value, google::protobuf::Message* message);

}  // namespace racksim::config
