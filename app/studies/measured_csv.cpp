// The measured-runs CSV of `racksim calibrate` (format: app/studies/calibrate.h).
#include <algorithm>
#include <iterator>
#include <optional>

#include <fmt/format.h>

#include "app/studies/calibrate.h"
#include "common/csv.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/number.h"

namespace racksim::app {

namespace {

// Where the header puts the step time, the group and the scenario fields.
struct CsvColumns {
  std::vector<std::string> header;
  int time = -1, group = -1;
  double time_scale = 1;  // to seconds
  std::vector<int> fields;
};

CsvColumns read_header(const std::vector<std::string>& cells, const std::string& path, int number) {
  CsvColumns columns;
  columns.header = cells;
  for (size_t i = 0; i < cells.size(); ++i) {
    const std::string& h = cells[i];
    if (h == "measured_step_time_s" || h == "measured_step_time_ms") {
      columns.time = static_cast<int>(i);
      columns.time_scale = h.back() == 's' && h[h.size() - 2] == 'm' ? 1e-3 : 1;
    } else if (h == "group") {
      columns.group = static_cast<int>(i);
    } else if (h != "note" && h != "name") {
      columns.fields.push_back(static_cast<int>(i));
    }
  }
  if (columns.time < 0) {
    throw InputError({path, number, 1}, "",
                     "the header needs a measured_step_time_s (or measured_step_time_ms) column");
  }
  return columns;
}

MeasuredPoint read_row(const std::vector<std::string>& cells, const CsvColumns& columns,
                       const std::string& path, int number) {
  const auto& header = columns.header;
  if (cells.size() != header.size()) {
    throw InputError({path, number, 1}, "",
                     fmt::format("{} cells, but the header has {}", cells.size(), header.size()));
  }
  MeasuredPoint p;
  p.path = path;
  p.line = number;
  const int t = columns.time;
  const std::optional<double> time = parse_finite_number(cells[t]);
  if (!time) {
    throw InputError({path, number, t + 1}, header[t],
                     fmt::format("'{}' is not a number", cells[t]));
  }
  p.step_time_s = *time * columns.time_scale;
  if (!(p.step_time_s > 0)) {
    throw InputError({path, number, t + 1}, header[t], "a measured step time must be positive");
  }
  if (columns.group >= 0) p.group = cells[columns.group];
  for (int c : columns.fields) {
    if (!cells[c].empty()) p.overrides.push_back(header[c] + "=" + cells[c]);
  }
  return p;
}

}  // namespace

MeasuredSet read_measured_csv(const std::string& path) {
  const auto lines = csv_lines(read_input_file(path, "the measured CSV", {path, 0, 0}, ""));
  if (lines.size() < 2) throw InputError({path, 0, 0}, "", "no measured rows");
  MeasuredSet set;
  set.path = path;
  const CsvColumns columns = read_header(lines.front().cells, path, lines.front().number);
  for (auto line = lines.begin() + 1; line != lines.end(); ++line) {
    set.points.push_back(read_row(line->cells, columns, path, line->number));
  }
  set.has_groups = columns.group >= 0;
  return set;
}

MeasuredSet read_measured_csvs(const std::vector<std::string>& paths) {
  if (paths.size() == 1) return read_measured_csv(paths.front());
  MeasuredSet set;
  set.several_files = true;
  for (size_t i = 0; i < paths.size(); ++i) {
    MeasuredSet part = read_measured_csv(paths[i]);
    if (i > 0 && part.has_groups != set.has_groups) {
      throw InputError({paths[i], 0, 0}, "group",
                       fmt::format("a group column in every measured file or in none ({} has {})",
                                   paths.front(), set.has_groups ? "one" : "none"));
    }
    set.has_groups = part.has_groups;
    set.path += (i > 0 ? ", " : "") + paths[i];
    std::move(part.points.begin(), part.points.end(), std::back_inserter(set.points));
  }
  return set;
}

std::string point_source(const MeasuredSet& set, const MeasuredPoint& point) {
  if (!set.several_files) return std::to_string(point.line);
  const auto slash = point.path.find_last_of('/');
  return fmt::format(
      "{}:{}", slash == std::string::npos ? point.path : point.path.substr(slash + 1), point.line);
}

}  // namespace racksim::app
