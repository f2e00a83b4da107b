// Reading a scenario: parsing (text format or JSON) with a line for every field and for every
// error, `--set` overrides, and the presets and defaults. The checks are in
// scenario_validate.cpp.
#include "config/scenario_loader.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/input_file.h"
#include "config/calibration_file.h"
#include "config/field_path.h"
#include "config/json_locations.h"
#include "config/scenario_presets.h"
#include "config/text_locations.h"

namespace racksim::config {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

const Descriptor* scenario_type() {
  return config::Scenario::descriptor();
}

// "valid fields of layout: tp, pp, ..." for the message at `parent` (the scenario when empty).
std::string valid_fields_of(const std::string& parent) {
  const Descriptor* type = message_at(scenario_type(), parent);
  if (type == nullptr) return {};
  return fmt::format("; valid fields of {}: {}", parent.empty() ? "the scenario" : parent,
                     field_names(*type));
}

// The field at `path`, or nullptr.
const FieldDescriptor* field_at(const std::string& path) {
  const Descriptor* parent = message_at(scenario_type(), parent_path(path));
  if (parent == nullptr) return nullptr;
  const std::vector<std::string> parts = split_path(path);
  return parent->FindFieldByName(parts.back());
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string_view trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// ---------------------------------------------------------------------------------------------
// Protobuf text format

// Keeps the first error: the parser stops there, and later ones would only be consequences.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (seen_) return;
    seen_ = true;
    line_ = line;
    column_ = column;
    message_ = message;
  }

  bool seen() const { return seen_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  bool seen_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

// The field a text-format error is about. Value errors name no field, so the tokens before
// the error say which one it was; "Expected identifier" between fields is about the message
// being filled, not the field before it.
std::string text_error_field(const TextPosition& position, const FirstError& error) {
  // A bad enum or bool value is reported at the token after it, maybe the next field's name;
  // the message names the field the value belongs to.
  const bool after_value = starts_with(error.message(), "Unknown enumeration value") ||
                           starts_with(error.message(), "Invalid value for boolean field");
  const size_t named = error.message().find("field \"");
  if (after_value && named != std::string::npos) {
    const size_t start = named + 7;
    const size_t end = error.message().find('"', start);
    if (end != std::string::npos) {
      return join_path(position.scope, error.message().substr(start, end - start));
    }
  }
  const bool between_fields =
      starts_with(error.message(), "Expected identifier") && position.expecting_name;
  if (between_fields || position.last_key.empty()) return position.scope;
  return position.last_key;
}

// Where to point for a text-format error (1-based). protobuf reports a bad enum or bool value
// at the token after it, which may be on the next line; point at the value itself.
SourceLocation text_error_location(const TextPosition& position, const FirstError& error,
                                   const std::string& path) {
  const bool after_value = starts_with(error.message(), "Unknown enumeration value") ||
                           starts_with(error.message(), "Invalid value for boolean field");
  if (after_value && position.previous_line >= 0) {
    return {path, position.previous_line + 1, position.previous_column + 1};
  }
  return {path, error.line() + 1, error.column() + 1};
}

std::string text_error_detail(const FirstError& error, const std::string& field) {
  if (error.message().find("has no field named") != std::string::npos) {
    return fmt::format("unknown field '{}'{}", split_path(field).back(),
                       valid_fields_of(parent_path(field)));
  }
  const FieldDescriptor* descriptor = field_at(field);
  if (descriptor != nullptr && descriptor->enum_type() != nullptr) {
    return fmt::format("{} (valid values: {})", error.message(),
                       enum_value_names(*descriptor->enum_type()));
  }
  return error.message();
}

config::Scenario parse_text_format(const std::string& text, const std::string& path,
                                   SourceMap* sources) {
  config::Scenario scenario;
  google::protobuf::TextFormat::Parser parser;
  FirstError error;
  google::protobuf::TextFormat::ParseInfoTree tree;
  parser.RecordErrorsTo(&error);
  parser.WriteLocationsTo(&tree);
  if (!parser.ParseFromString(text, &scenario)) {
    if (!error.seen()) throw InputError({path, 0, 0}, "", "not a valid scenario");
    const TextPosition position = text_position(text, error.line(), error.column());
    const std::string field = text_error_field(position, error);
    throw InputError(text_error_location(position, error, path), field,
                     text_error_detail(error, field));
  }
  record_text_locations(scenario, tree, "", path, sources);
  return scenario;
}

// ---------------------------------------------------------------------------------------------
// JSON

// protobuf reports a JSON syntax error as "reason\n<up to 20 chars either side>\n<spaces>^".
// The offset is recovered by finding that excerpt in the text; std::string::npos if it cannot be.
size_t json_error_offset(std::string_view text, std::string_view message) {
  const size_t first_newline = message.find('\n');
  const size_t last_newline = message.rfind('\n');
  if (first_newline == std::string_view::npos || last_newline == first_newline) {
    return std::string_view::npos;
  }
  const std::string_view excerpt =
      message.substr(first_newline + 1, last_newline - first_newline - 1);
  const std::string_view caret_line = message.substr(last_newline + 1);
  const size_t caret = caret_line.find('^');
  if (excerpt.empty() || caret == std::string_view::npos) return std::string_view::npos;
  // protobuf shows at most 20 characters before the error: with fewer, the excerpt starts the
  // text (of the chunk it parsed, which is all of it here).
  constexpr size_t kContext = 20;
  const size_t start =
      caret < kContext ? (starts_with(text, excerpt) ? 0 : std::string::npos) : text.find(excerpt);
  if (start == std::string_view::npos) return std::string_view::npos;
  return start + caret;
}

SourceLocation json_syntax_location(std::string_view text, std::string_view message,
                                    const JsonScan& scan, const std::string& path) {
  const size_t offset = json_error_offset(text, message);
  if (offset != std::string_view::npos) {
    // The newline before the offset, if any; the column counts from the character after it.
    const size_t newline = offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
    const size_t column = newline == std::string_view::npos ? offset + 1 : offset - newline;
    return {path, line_of_offset(text, offset), static_cast<int>(column)};
  }
  return {path, scan.unbalanced_line, scan.unbalanced_column};
}

// Splits "(layout) tpp: Cannot find field." into field "layout.tpp" and the reason,
// "(layout.tp): invalid value ..." into "layout.tp" and the reason, "foo: Cannot find field."
// into "foo" and the reason.
std::pair<std::string, std::string> split_json_error(const std::string& message) {
  if (starts_with(message, "(")) {
    const size_t close = message.find(')');
    const size_t colon = message.find(": ", close);
    if (close != std::string::npos && colon != std::string::npos) {
      const std::string parent = message.substr(1, close - 1);
      const std::string name(trim(std::string_view(message).substr(close + 1, colon - close - 1)));
      return {name.empty() ? parent : join_path(parent, name), message.substr(colon + 2)};
    }
  }
  if (starts_with(message, ": ")) return {"", message.substr(2)};  // about the whole document
  const size_t colon = message.find(": ");
  if (colon != std::string::npos && colon > 0 &&
      message.find_first_of(" (", 0) >= colon) {  // a bare field name, not a sentence
    return {message.substr(0, colon), message.substr(colon + 2)};
  }
  return {"", message};
}

// "invalid value "x" for type TYPE_INT32" -> "invalid value "x" (expected int32)".
std::string json_invalid_value(const std::string& reason, const std::string& field) {
  const size_t for_type = reason.rfind(" for type ");
  if (for_type == std::string::npos) return reason;
  std::string expected = reason.substr(for_type + 10);
  if (starts_with(expected, "TYPE_")) {
    expected = expected.substr(5);
    for (char& c : expected) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  } else if (const FieldDescriptor* descriptor = field_at(field)) {
    if (descriptor->enum_type() != nullptr) {
      expected = "one of " + enum_value_names(*descriptor->enum_type());
    } else if (descriptor->message_type() != nullptr) {
      expected = "an object { ... }";
    }
  }
  return fmt::format("{} (expected {})", reason.substr(0, for_type), expected);
}

// Turns protobuf's JSON error into the field it is about and a message for the user.
std::pair<std::string, std::string> describe_json_error(const std::string& message) {
  auto [field, reason] = split_json_error(message);
  if (starts_with(reason, "Cannot find field")) {
    return {field, fmt::format("unknown field '{}'{}", split_path(field).back(),
                               valid_fields_of(parent_path(field)))};
  }
  if (starts_with(reason, "invalid value")) {
    // A key given twice: "(layout): invalid value oneof field '_tp' is already set. Cannot set
    // 'tp' for type oneof".
    const size_t cannot_set = reason.find("Cannot set '");
    if (reason.find("is already set") != std::string::npos && cannot_set != std::string::npos) {
      const size_t start = cannot_set + 12;
      const std::string name = reason.substr(start, reason.find('\'', start) - start);
      return {join_path(field, name), "field given more than once"};
    }
    return {field, json_invalid_value(reason, field)};
  }
  if (starts_with(reason, "Proto field is not repeating")) {
    return {field, "expected a single value, not a list"};
  }
  return {field, reason};
}

config::Scenario parse_json(const std::string& text, const std::string& path, SourceMap* sources) {
  const JsonScan scan = scan_json_keys(text, scenario_type());
  for (const JsonKey& key : scan.keys) sources->set(key.path, {path, key.line, key.column});

  config::Scenario scenario;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(text, &scenario, options);
  if (status.ok()) return scenario;

  const std::string message(status.message());
  if (message.find('\n') != std::string::npos) {  // a syntax error, with an excerpt
    throw InputError(json_syntax_location(text, message, scan, path), "",
                     "JSON syntax error: " + message.substr(0, message.find('\n')));
  }
  auto [field, detail] = describe_json_error(message);
  throw InputError(sources->find(field), field, detail);
}

bool is_json(const std::string& text, const std::string& path) {
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) return true;
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

}  // namespace

void SourceMap::take_section(const SourceMap& other, const std::string& section) {
  const std::string prefix = section + ".";
  for (auto it = other.locations_.lower_bound(prefix);
       it != other.locations_.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    locations_[it->first] = it->second;
  }
}

std::vector<std::string> SourceMap::paths_under(const std::string& prefix) const {
  std::vector<std::string> out;
  for (auto it = locations_.lower_bound(prefix);
       it != locations_.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    out.push_back(it->first);
  }
  return out;
}

SourceLocation SourceMap::find(const std::string& path) const {
  for (std::string current = path; !current.empty(); current = parent_path(current)) {
    if (auto it = locations_.find(current); it != locations_.end()) return it->second;
  }
  return {file_, 0, 0};
}

bool SourceMap::inherited(const std::string& path) const {
  const auto it = locations_.find(path);
  return it != locations_.end() && it->second.file.find(kInheritedMark) != std::string::npos;
}

bool SourceMap::overridden(const std::string& path) const {
  const auto it = locations_.find(path);
  return it != locations_.end() && it->second.file.starts_with("--set");
}

config::Scenario parse_scenario_text(const std::string& text, const std::string& path,
                                     SourceMap* sources) {
  SourceMap unused;
  if (sources == nullptr) sources = &unused;
  sources->set_file(path);
  return is_json(text, path) ? parse_json(text, path, sources)
                             : parse_text_format(text, path, sources);
}

void apply_override(const std::string& assignment, config::Scenario* scenario, SourceMap* sources) {
  const size_t equals = assignment.find('=');
  const std::string path(trim(std::string_view(assignment).substr(0, equals)));
  const SourceLocation where{"--set", 0, 0};
  if (equals == std::string::npos || path.empty()) {
    throw InputError(
        where, path,
        fmt::format("'{}' is not an override: expected path=value, e.g. layout.pp=4", assignment));
  }
  const std::string_view value = trim(std::string_view(assignment).substr(equals + 1));

  google::protobuf::Message* message = scenario;
  const std::vector<std::string> segments = split_path(path);
  std::string walked;
  for (size_t i = 0; i < segments.size(); ++i) {
    const Descriptor* type = message->GetDescriptor();
    const FieldDescriptor* field = type->FindFieldByName(segments[i]);
    if (field == nullptr) {
      throw InputError(where, path,
                       fmt::format("unknown field '{}'{}", segments[i], valid_fields_of(walked)));
    }
    walked = join_path(walked, segments[i]);
    const bool last = i + 1 == segments.size();
    if (field->is_repeated() && last && field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
      if (std::string problem = set_enum_list_from_string(*field, value, message);
          !problem.empty()) {
        throw InputError(where, path, problem);
      }
      break;
    }
    if (field->is_repeated()) {
      throw InputError(where, path, fmt::format("'{}' is a list; --set cannot set it", walked));
    }
    const bool is_message = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (i + 1 < segments.size()) {
      if (!is_message) {
        throw InputError(where, path, fmt::format("'{}' is a value and has no fields", walked));
      }
      message = message->GetReflection()->MutableMessage(message, field);
      continue;
    }
    if (is_message) {
      throw InputError(where, path,
                       fmt::format("'{}' is a message; set one of its fields{}", walked,
                                   valid_fields_of(walked)));
    }
    if (std::string problem = set_scalar_from_string(*field, value, message); !problem.empty()) {
      throw InputError(where, path, problem);
    }
  }
  sources->set(path, {"--set " + assignment, 0, 0});
}

// A first stage's layer count pinned in the file was chosen for the file's pipeline depth; a
// --set that changes layout.pp alone would silently give a lopsided split (22 + 7 + 7 + 7).
void check_pinned_first_stage(int file_pp, const LoadedScenario& loaded) {
  const config::Layout& layout = loaded.scenario.layout();
  if (!layout.has_first_stage_layers() || layout.first_stage_layers() == 0) return;
  if (!loaded.sources.overridden("layout.pp") || layout.pp() == file_pp) return;
  if (loaded.sources.overridden("layout.first_stage_layers")) return;
  const SourceLocation pinned = loaded.sources.find("layout.first_stage_layers");
  throw InputError(pinned, "layout.first_stage_layers",
                   fmt::format("{} layers on the first stage were pinned for layout.pp {}, but "
                               "--set layout.pp={} changes the pipeline: set "
                               "layout.first_stage_layers as well (0 for equal stages)",
                               layout.first_stage_layers(), file_pp, layout.pp()));
}

LoadedScenario load_scenario_text(const std::string& text, const std::string& path,
                                  const std::vector<std::string>& overrides) {
  LoadedScenario loaded;
  loaded.scenario = parse_scenario_text(text, path, &loaded.sources);
  const int file_pp = loaded.scenario.layout().pp();
  for (const std::string& assignment : overrides) {
    apply_override(assignment, &loaded.scenario, &loaded.sources);
  }
  if (loaded.scenario.has_calibration()) {
    // Calibrated values override the file's; --set, applied again, overrides them.
    merge_calibration(&loaded.scenario, &loaded.sources);
    for (const std::string& assignment : overrides) {
      apply_override(assignment, &loaded.scenario, &loaded.sources);
    }
  }
  check_pinned_first_stage(file_pp, loaded);
  if (!overrides.empty()) {
    // The report's title is the scenario's name: say what the command line changed.
    loaded.scenario.set_name(
        fmt::format("{} (--set {})", loaded.scenario.name(), fmt::join(overrides, ", ")));
  }
  note_preset_sources(loaded.scenario, &loaded.sources);
  resolve_presets(&loaded.scenario, loaded.sources);
  validate_scenario(loaded.scenario, loaded.sources);
  // Read after the checks, before any work: a bad row is exit 2 with nothing written.
  loaded.measured_collectives = read_measured_table(loaded.scenario.hardware(), loaded.sources);
  return loaded;
}

LoadedScenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  constexpr std::uintmax_t kMaxScenarioBytes = 16 << 20;  // scenarios are a few kB
  const std::string text =
      read_input_file(path, "the scenario", {path, 0, 0}, "", kMaxScenarioBytes);
  return load_scenario_text(text, path, overrides);
}

}  // namespace racksim::config
