// A CSV file of measurements as rows keyed by the header's names, for tests that read the
// measured data under data/measured/.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/csv.h"
#include "tests/support/run_racksim.h"

namespace racksim::testing {

using CsvRow = std::map<std::string, std::string>;

inline std::vector<CsvRow> read_csv_rows(const std::string& path) {
  const std::vector<CsvLine> lines = csv_lines(read_file(path));
  std::vector<CsvRow> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    CsvRow row;
    for (size_t c = 0; c < lines[0].cells.size() && c < lines[i].cells.size(); ++c)
      row[lines[0].cells[c]] = lines[i].cells[c];
    rows.push_back(row);
  }
  return rows;
}

inline double cell_number(const CsvRow& row, const std::string& column) {
  return std::stod(row.at(column));
}

}  // namespace racksim::testing
