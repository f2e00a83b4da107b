// Reading Chakra attributes by name, whatever value kind the writer chose.
//
// Writers disagree on integer kinds (uint64_val vs int64_val has broken real tools), so an
// integer attribute is accepted from any integer field (int32/64, uint32/64, sint32/64,
// fixed32/64, sfixed32/64) and from bool_val; sizes are also accepted from double/float.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proto/chakra_et.pb.h"

namespace racksim::chakra {

// An integer attribute's value. nullopt when the attribute holds no integer (a string, a list,
// a float) or an unsigned value above INT64_MAX.
std::optional<int64_t> integer_value(const ChakraProtoMsg::AttributeProto& attr);

// A size or count: any integer kind, or a finite double/float.
std::optional<double> number_value(const ChakraProtoMsg::AttributeProto& attr);

// bool_val, or an integer kind holding 0 or 1.
std::optional<bool> bool_value(const ChakraProtoMsg::AttributeProto& attr);

// string_val or bytes_val.
const std::string* string_value(const ChakraProtoMsg::AttributeProto& attr);

// The name of the value field that is set ("int64_val", "string_list", ...), or "no value".
std::string_view value_kind(const ChakraProtoMsg::AttributeProto& attr);

}  // namespace racksim::chakra
