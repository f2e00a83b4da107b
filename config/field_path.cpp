#include "config/field_path.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "common/number.h"

namespace racksim::config {
namespace {

using google::protobuf::FieldDescriptor;

// Integers in plain decimal: a scenario value like "1e3" or "0x10" on the command line is more
// likely a typo than an intent.
template <typename Int>
std::optional<Int> parse_integer(std::string_view text) {
  Int value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

std::optional<bool> parse_bool(std::string_view text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  return std::nullopt;
}

// Exact value names first; a unique case-insensitive match saves a round trip for "full".
const google::protobuf::EnumValueDescriptor* find_enum_value(
    const google::protobuf::EnumDescriptor& type, std::string_view text) {
  if (const auto* exact = type.FindValueByName(std::string(text))) return exact;
  const google::protobuf::EnumValueDescriptor* found = nullptr;
  for (int i = 0; i < type.value_count(); ++i) {
    const std::string& name = type.value(i)->name();
    bool same = name.size() == text.size();
    for (size_t c = 0; same && c < name.size(); ++c) {
      same = std::toupper(static_cast<unsigned char>(name[c])) ==
             std::toupper(static_cast<unsigned char>(text[c]));
    }
    if (!same) continue;
    if (found != nullptr) return nullptr;
    found = type.value(i);
  }
  return found;
}

std::string bad_value(const FieldDescriptor& field, std::string_view value,
                      std::string_view expected) {
  return fmt::format("'{}' is not a valid value for {} (expected {})", value, field.name(),
                     expected);
}

// Stores a parsed value, or says why the text was not one.
template <typename T, typename Setter>
std::string set_parsed(std::optional<T> parsed, Setter set, const FieldDescriptor& field,
                       std::string_view value, std::string_view expected) {
  if (!parsed) return bad_value(field, value, expected);
  set(*parsed);
  return {};
}

}  // namespace

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    parts.emplace_back(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

std::string join_path(std::string_view prefix, std::string_view name) {
  if (prefix.empty()) return std::string(name);
  return fmt::format("{}.{}", prefix, name);
}

std::string parent_path(std::string_view path) {
  size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string() : std::string(path.substr(0, dot));
}

const google::protobuf::Descriptor* message_at(const google::protobuf::Descriptor* root,
                                               std::string_view path) {
  if (path.empty()) return root;
  const google::protobuf::Descriptor* current = root;
  for (const std::string& name : split_path(path)) {
    if (current == nullptr) return nullptr;
    const FieldDescriptor* field = current->FindFieldByName(name);
    current = field == nullptr ? nullptr : field->message_type();
  }
  return current;
}

std::string field_names(const google::protobuf::Descriptor& message) {
  std::string names;
  for (int i = 0; i < message.field_count(); ++i) {
    if (i > 0) names += ", ";
    names += message.field(i)->name();
  }
  return names;
}

std::string enum_value_names(const google::protobuf::EnumDescriptor& type) {
  std::string names;
  for (int i = 0; i < type.value_count(); ++i) {
    if (type.value(i)->number() == 0) continue;  // the proto3 "unset" placeholder
    if (!names.empty()) names += ", ";
    names += type.value(i)->name();
  }
  return names;
}

std::string set_scalar_from_string(const FieldDescriptor& field, std::string_view value,
                                   google::protobuf::Message* message) {
  const google::protobuf::Reflection* r = message->GetReflection();
  const FieldDescriptor* f = &field;
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return set_parsed(
          parse_integer<int32_t>(value), [&](int32_t v) { r->SetInt32(message, f, v); }, field,
          value, "a 32-bit integer");
    case FieldDescriptor::CPPTYPE_INT64:
      return set_parsed(
          parse_integer<int64_t>(value), [&](int64_t v) { r->SetInt64(message, f, v); }, field,
          value, "an integer");
    case FieldDescriptor::CPPTYPE_UINT32:
      return set_parsed(
          parse_integer<uint32_t>(value), [&](uint32_t v) { r->SetUInt32(message, f, v); }, field,
          value, "a non-negative 32-bit integer");
    case FieldDescriptor::CPPTYPE_UINT64:
      return set_parsed(
          parse_integer<uint64_t>(value), [&](uint64_t v) { r->SetUInt64(message, f, v); }, field,
          value, "a non-negative integer");
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return set_parsed(
          parse_finite_number(value), [&](double v) { r->SetDouble(message, f, v); }, field, value,
          "a number such as 450e9");
    case FieldDescriptor::CPPTYPE_FLOAT:
      return set_parsed(
          parse_finite_number(value),
          [&](double v) { r->SetFloat(message, f, static_cast<float>(v)); }, field, value,
          "a number");
    case FieldDescriptor::CPPTYPE_BOOL:
      return set_parsed(
          parse_bool(value), [&](bool v) { r->SetBool(message, f, v); }, field, value,
          "true, false, 1 or 0");
    case FieldDescriptor::CPPTYPE_STRING:
      r->SetString(message, f, std::string(value));
      return {};
    case FieldDescriptor::CPPTYPE_ENUM: {
      const google::protobuf::EnumValueDescriptor* v = find_enum_value(*field.enum_type(), value);
      if (v == nullptr) {
        return bad_value(field, value, "one of " + enum_value_names(*field.enum_type()));
      }
      r->SetEnum(message, f, v);
      return {};
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return fmt::format("{} is a message, not a value; set one of its fields", field.name());
}

std::string set_enum_list_from_string(const FieldDescriptor& field, std::string_view value,
                                      google::protobuf::Message* message) {
  const google::protobuf::Reflection* r = message->GetReflection();
  r->ClearField(message, &field);
  while (!value.empty()) {
    const size_t plus = value.find('+');
    const std::string_view name = value.substr(0, plus);
    const google::protobuf::EnumValueDescriptor* v = find_enum_value(*field.enum_type(), name);
    if (v == nullptr) {
      return bad_value(field, name,
                       "'+'-separated names of " + enum_value_names(*field.enum_type()));
    }
    r->AddEnum(message, &field, v);
    value = plus == std::string_view::npos ? std::string_view{} : value.substr(plus + 1);
  }
  return {};
}

}  // namespace racksim::config
