// Comma-separated text as spreadsheets and nccl-tests post-processing write it.
#pragma once

#include <string>
#include <vector>

namespace racksim {

// One line split into its cells: commas outside double quotes separate cells, "" inside quotes
// is one quote, a carriage return is dropped, and blanks around each cell are trimmed.
std::vector<std::string> split_csv_line(const std::string& line);

struct CsvLine {
  int number = 0;  // 1-based line in the file
  std::vector<std::string> cells;
};

// The lines of CSV `text` split into cells, without the lines a reader skips (empty, a '#'
// comment, or nothing but blanks and commas) and without a leading UTF-8 byte-order mark (a
// spreadsheet's export starts with one). The first is the header, if any.
std::vector<CsvLine> csv_lines(const std::string& text);

}  // namespace racksim
