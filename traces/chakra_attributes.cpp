#include "traces/chakra_attributes.h"

#include <cmath>
#include <limits>

namespace racksim::chakra {

namespace {

using Attr = ChakraProtoMsg::AttributeProto;

std::optional<int64_t> from_unsigned(uint64_t value) {
  if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(value);
}

}  // namespace

std::optional<int64_t> integer_value(const Attr& attr) {
  switch (attr.value_case()) {
    case Attr::kInt32Val:
      return attr.int32_val();
    case Attr::kInt64Val:
      return attr.int64_val();
    case Attr::kUint32Val:
      return attr.uint32_val();
    case Attr::kUint64Val:
      return from_unsigned(attr.uint64_val());
    case Attr::kSint32Val:
      return attr.sint32_val();
    case Attr::kSint64Val:
      return attr.sint64_val();
    case Attr::kFixed32Val:
      return attr.fixed32_val();
    case Attr::kFixed64Val:
      return from_unsigned(attr.fixed64_val());
    case Attr::kSfixed32Val:
      return attr.sfixed32_val();
    case Attr::kSfixed64Val:
      return attr.sfixed64_val();
    case Attr::kBoolVal:
      return attr.bool_val() ? 1 : 0;
    default:
      return std::nullopt;
  }
}

std::optional<double> number_value(const Attr& attr) {
  double value = 0;
  switch (attr.value_case()) {
    case Attr::kDoubleVal:
      value = attr.double_val();
      break;
    case Attr::kFloatVal:
      value = attr.float_val();
      break;
    case Attr::kUint64Val:
      return static_cast<double>(attr.uint64_val());
    case Attr::kFixed64Val:
      return static_cast<double>(attr.fixed64_val());
    default: {
      const auto integer = integer_value(attr);
      if (!integer) return std::nullopt;
      return static_cast<double>(*integer);
    }
  }
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<bool> bool_value(const Attr& attr) {
  if (attr.value_case() == Attr::kBoolVal) return attr.bool_val();
  const auto integer = integer_value(attr);
  if (!integer || (*integer != 0 && *integer != 1)) return std::nullopt;
  return *integer == 1;
}

const std::string* string_value(const Attr& attr) {
  if (attr.value_case() == Attr::kStringVal) return &attr.string_val();
  if (attr.value_case() == Attr::kBytesVal) return &attr.bytes_val();
  return nullptr;
}

std::string_view value_kind(const Attr& attr) {
  if (attr.value_case() == Attr::VALUE_NOT_SET) return "no value";
  const auto* field = Attr::descriptor()->FindFieldByNumber(static_cast<int>(attr.value_case()));
  return field != nullptr ? std::string_view(field->name()) : std::string_view("?");
}

}  // namespace racksim::chakra
