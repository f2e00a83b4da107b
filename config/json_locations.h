// Where each key of a JSON scenario is written. protobuf's JSON parser reports errors by field
// path only ("(layout) tpp: Cannot find field."), so this small scanner maps key paths back to
// lines. It is not a validator: it tracks strings, nesting and key positions, and notes the
// first bracket that does not balance so that a syntax error can still name a line.
#pragma once

#include <google/protobuf/descriptor.h>

#include <string>
#include <string_view>
#include <vector>

namespace racksim::config {

struct JsonKey {
  std::string path;  // proto field names where the key names a known field, else the key itself
  int line = 0;      // 1-based
  int column = 0;    // 1-based, the opening quote of the key
};

struct JsonScan {
  std::vector<JsonKey> keys;  // document order; a repeated key appears twice
  // The first bracket that does not balance (a closer of the wrong kind, a closer with nothing
  // open, or the innermost bracket still open at the end), or an unterminated string.
  // line == 0 when everything balances.
  int unbalanced_line = 0;
  int unbalanced_column = 0;
};

// Scans `text`, naming keys by the fields of `root` (JSON names such as "bytesPerS" become
// "bytes_per_s"). Keys inside arrays are not recorded: the array's own key stands for them.
JsonScan scan_json_keys(std::string_view text, const google::protobuf::Descriptor* root);

// The 1-based line of a byte offset into `text`.
int line_of_offset(std::string_view text, size_t offset);

}  // namespace racksim::config
