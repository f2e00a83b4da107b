#include "config/text_locations.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <vector>

#include "config/field_path.h"

namespace racksim::config {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::io::Tokenizer;

// The parser has already reported the first error; the replay only needs the tokens.
class SilentErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
};

// A replay of the text-format grammar that is just detailed enough to know which field each
// token belongs to.
class Replay {
 public:
  void token(const Tokenizer::Token& token) {
    switch (token.type) {
      case Tokenizer::TYPE_IDENTIFIER:
        identifier(token.text);
        break;
      case Tokenizer::TYPE_STRING:
        // Adjacent strings concatenate, so a string value may be followed by another.
        if (state_ == State::kValue || state_ == State::kAfterString) {
          state_ = State::kAfterString;
        }
        break;
      case Tokenizer::TYPE_INTEGER:
      case Tokenizer::TYPE_FLOAT:
        if (state_ == State::kValue) state_ = State::kName;
        break;
      case Tokenizer::TYPE_SYMBOL:
        symbol(token.text);
        break;
      default:
        break;
    }
  }

  // The token at the error position: an unknown field name is reported there or just after.
  void token_at_error(const Tokenizer::Token& token) {
    if (token.type == Tokenizer::TYPE_IDENTIFIER && expecting_name()) identifier(token.text);
  }

  TextPosition position() const {
    return {scope(), last_key_, state_ == State::kName || state_ == State::kAfterString};
  }

 private:
  enum class State { kName, kAfterName, kValue, kAfterString, kList };
  struct Scope {
    std::string path;
    bool list = false;
  };

  bool expecting_name() const { return state_ == State::kName || state_ == State::kAfterString; }
  std::string scope() const { return scopes_.empty() ? std::string() : scopes_.back().path; }

  void identifier(const std::string& text) {
    if (expecting_name()) {
      last_key_ = join_path(scope(), text);
      state_ = State::kAfterName;
    } else if (state_ == State::kValue) {
      state_ = State::kName;  // an enum value, true/false, inf
    }
  }

  void symbol(const std::string& text) {
    if (text == ":") {
      if (state_ == State::kAfterName) state_ = State::kValue;
    } else if (text == "{" || text == "<") {
      scopes_.push_back({state_ == State::kList ? scope() : last_key_, false});
      state_ = State::kName;
    } else if (text == "}" || text == ">") {
      if (!scopes_.empty()) scopes_.pop_back();
      state_ = !scopes_.empty() && scopes_.back().list ? State::kList : State::kName;
    } else if (text == "[" && (state_ == State::kValue || state_ == State::kAfterName)) {
      scopes_.push_back({last_key_, true});
      state_ = State::kList;
    } else if (text == "]" && state_ == State::kList) {
      scopes_.pop_back();
      state_ = State::kName;
    } else if ((text == ";" || text == ",") && state_ != State::kList) {
      state_ = State::kName;
    }
  }

  State state_ = State::kName;
  std::vector<Scope> scopes_;
  std::string last_key_;
};

}  // namespace

void record_text_locations(const google::protobuf::Message& message,
                           const google::protobuf::TextFormat::ParseInfoTree& tree,
                           const std::string& prefix, const std::string& file, SourceMap* sources) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    // Repeated fields are addressed as a whole, by their first element.
    const int index = field->is_repeated() ? 0 : -1;
    const std::string path = join_path(prefix, field->name());
    const auto location = tree.GetLocation(field, index);
    if (location.line >= 0) sources->set(path, {file, location.line + 1, location.column + 1});
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || field->is_repeated()) continue;
    if (const auto* nested = tree.GetTreeForNested(field, -1)) {
      record_text_locations(reflection->GetMessage(message, field), *nested, path, file, sources);
    }
  }
}

TextPosition text_position(std::string_view text, int line, int column) {
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  SilentErrors errors;
  Tokenizer tokenizer(&input, &errors);
  // The same lexical rules as TextFormat::Parser.
  tokenizer.set_comment_style(Tokenizer::SH_COMMENT_STYLE);
  tokenizer.set_allow_f_after_float(true);
  tokenizer.set_require_space_after_number(false);
  tokenizer.set_allow_multiline_strings(true);

  Replay replay;
  int previous_line = -1, previous_column = -1;
  while (tokenizer.Next()) {
    const Tokenizer::Token& token = tokenizer.current();
    if (token.line > line || (token.line == line && token.column > column)) break;
    if (token.line == line && token.column == column) {
      replay.token_at_error(token);
      break;
    }
    replay.token(token);
    previous_line = token.line;
    previous_column = token.column;
  }
  TextPosition position = replay.position();
  position.previous_line = previous_line;
  position.previous_column = previous_column;
  return position;
}

}  // namespace racksim::config
