// Comma-separated text as spreadsheets and nccl-tests post-processing write it.
#pragma once

#include <string>
#include <vector>

namespace racksim {

// One line split into its cells: commas outside double quotes separate cells, "" inside quotes
// is one quote, a carriage return is dropped, and blanks around each cell are trimmed.
std::vector<std::string> split_csv_line(const std::string& line);

// Lines a CSV reader skips: empty, a '#' comment, or nothing but blanks and commas.
bool skipped_csv_line(const std::string& line);

// `line` without a leading UTF-8 byte-order mark (a spreadsheet's export starts with one).
void strip_byte_order_mark(std::string* line);

}  // namespace racksim
