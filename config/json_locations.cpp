#include "config/json_locations.h"

#include "config/field_path.h"

namespace racksim::config {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// One open '{' or '['.
struct Frame {
  bool is_object = true;
  bool addressable = true;           // whether keys directly inside are recorded
  std::string path;                  // the field path of this object
  const Descriptor* type = nullptr;  // its message type, when known
  bool expecting_key = true;         // objects: the next string is a key
  std::string key_path;              // objects: the path of the last key
  const Descriptor* key_type = nullptr;
  int line = 0;
  int column = 0;
};

const FieldDescriptor* find_field(const Descriptor* type, const std::string& key) {
  if (type == nullptr) return nullptr;
  if (const FieldDescriptor* field = type->FindFieldByName(key)) return field;
  for (int i = 0; i < type->field_count(); ++i) {
    if (type->field(i)->json_name() == key) return type->field(i);
  }
  return nullptr;
}

class Scanner {
 public:
  Scanner(std::string_view text, const Descriptor* root) : text_(text), root_(root) {}

  JsonScan run() {
    while (pos_ < text_.size()) step();
    if (!stack_.empty()) note_unbalanced(stack_.back().line, stack_.back().column);
    return std::move(result_);
  }

 private:
  void step() {
    const char c = text_[pos_];
    if (c == '"') {
      const int line = line_, column = column_;
      std::string value = read_string();
      if (!stack_.empty() && stack_.back().is_object && stack_.back().expecting_key) {
        on_key(std::move(value), line, column);
      }
      return;
    }
    if (c == '{' || c == '[') {
      open(c == '{');
    } else if (c == '}' || c == ']') {
      close(c == '}');
    } else if (c == ',' && !stack_.empty() && stack_.back().is_object) {
      stack_.back().expecting_key = true;
    }
    advance();
  }

  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  // At an opening quote: returns the string's contents (simple escapes decoded; \uXXXX kept
  // as written, since field names are ASCII) and leaves the position after the closing quote.
  std::string read_string() {
    const int line = line_, column = column_;
    std::string value;
    advance();
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      advance();
      if (c == '"') return value;
      if (c != '\\' || pos_ >= text_.size()) {
        value += c;
        continue;
      }
      char escaped = text_[pos_];
      advance();
      switch (escaped) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'u':
          value += "\\u";
          break;
        default:
          value += escaped;
          break;
      }
    }
    note_unbalanced(line, column);  // the string never ends
    return value;
  }

  void on_key(std::string key, int line, int column) {
    Frame& frame = stack_.back();
    const FieldDescriptor* field = find_field(frame.type, key);
    frame.key_path = join_path(frame.path, field != nullptr ? field->name() : key);
    frame.key_type = field != nullptr ? field->message_type() : nullptr;
    frame.expecting_key = false;
    if (frame.addressable) result_.keys.push_back({frame.key_path, line, column});
  }

  void open(bool is_object) {
    Frame frame;
    frame.is_object = is_object;
    frame.line = line_;
    frame.column = column_;
    if (stack_.empty()) {
      frame.type = root_;
    } else if (const Frame& parent = stack_.back(); parent.is_object) {
      frame.path = parent.key_path;
      frame.type = parent.key_type;
      frame.addressable = parent.addressable && is_object;
    } else {
      // Inside an array: the elements share the array's path and are not addressed one by one.
      frame.path = parent.path;
      frame.addressable = false;
    }
    stack_.push_back(std::move(frame));
  }

  void close(bool is_object) {
    if (stack_.empty()) {
      note_unbalanced(line_, column_);
      return;
    }
    if (stack_.back().is_object != is_object) note_unbalanced(line_, column_);
    stack_.pop_back();
  }

  void note_unbalanced(int line, int column) {
    if (result_.unbalanced_line != 0) return;
    result_.unbalanced_line = line;
    result_.unbalanced_column = column;
  }

  std::string_view text_;
  const Descriptor* root_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
  std::vector<Frame> stack_;
  JsonScan result_;
};

}  // namespace

JsonScan scan_json_keys(std::string_view text, const google::protobuf::Descriptor* root) {
  return Scanner(text, root).run();
}

int line_of_offset(std::string_view text, size_t offset) {
  int line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') ++line;
  }
  return line;
}

}  // namespace racksim::config
