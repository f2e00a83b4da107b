// Locations in a protobuf text-format scenario: the line of every field that parsed (from the
// parser's ParseInfoTree), and the field an error position belongs to. protobuf's messages for
// value errors ('Expected integer, got: "x"') do not name the field, so the second is recovered
// from the tokens before the error.
#pragma once

#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

#include <string>
#include <string_view>

#include "config/scenario_loader.h"

namespace racksim::config {

// Records "layout.tp" -> file:line:column for every field set in `message` (1-based).
void record_text_locations(const google::protobuf::Message& message,
                           const google::protobuf::TextFormat::ParseInfoTree& tree,
                           const std::string& prefix, const std::string& file, SourceMap* sources);

struct TextPosition {
  std::string scope;     // the message being filled at the position ("layout"; "" at the top)
  std::string last_key;  // full path of the last field name before (or at) the position
  bool expecting_name = false;  // whether the parser was between fields at the position
  // The 0-based position of the last token before the error (-1 if none): the value, for
  // errors that protobuf reports only once it has moved past it.
  int previous_line = -1;
  int previous_column = -1;
};

// Replays the tokens of `text` up to the 0-based (line, column) of an error.
TextPosition text_position(std::string_view text, int line, int column);

}  // namespace racksim::config
