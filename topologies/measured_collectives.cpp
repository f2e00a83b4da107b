#include "topologies/measured_collectives.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "common/csv.h"
#include "common/input_file.h"
#include "common/number.h"

namespace racksim::topo {

namespace {

constexpr int kMaxGpus = 1 << 20;
constexpr double kMaxBytes = 1e15;  // a petabyte: no buffer of one call is larger
constexpr double kMaxTimeUs = 1e9;  // a quarter of an hour for one call

// Orders a curve's samples by size, for std::lower_bound.
bool smaller(const CollectiveSample& sample, double bytes) {
  return sample.bytes < bytes;
}

struct Columns {
  std::vector<std::string> header;
  int collective = -1, gpus = -1, size = -1, time = -1;
};

int column_of(const std::vector<std::string>& header, std::string_view name) {
  const auto at = std::find(header.begin(), header.end(), name);
  return at == header.end() ? -1 : static_cast<int>(at - header.begin());
}

Columns read_header(const std::vector<std::string>& cells, const std::string& path, int line) {
  Columns c;
  c.header = cells;
  c.collective = column_of(cells, "collective");
  c.gpus = column_of(cells, "gpus");
  c.size = column_of(cells, "size_bytes");
  for (const char* name : {"time_us", "out_of_place_time_us", "in_place_time_us"}) {
    if (c.time < 0) c.time = column_of(cells, name);
  }
  if (c.gpus < 0 || c.size < 0 || c.time < 0) {
    throw InputError({path, line, 1}, "",
                     "the header needs the columns gpus, size_bytes and time_us (or "
                     "out_of_place_time_us or in_place_time_us)");
  }
  return c;
}

// The collective's name as graph/event_graph's to_string(CollectiveKind) spells it.
std::optional<std::string> collective_name(const std::string& cell) {
  if (cell.empty()) return "all_reduce";
  std::string name = cell;
  if (name.size() > 5 && name.ends_with("_perf")) name.resize(name.size() - 5);
  if (name == "alltoall") name = "all_to_all";
  for (const char* known :
       {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce"}) {
    if (name == known) return name;
  }
  return std::nullopt;
}

double number_in(const std::vector<std::string>& cells, const Columns& c, int column,
                 const std::string& path, int line, double max) {
  const std::string& cell = cells[column];
  const std::optional<double> parsed = parse_finite_number(cell);
  if (!parsed) {
    throw InputError({path, line, column + 1}, c.header[column],
                     fmt::format("'{}' is not a number", cell));
  }
  const double value = *parsed;
  if (!(value > 0) || value > max) {
    throw InputError({path, line, column + 1}, c.header[column],
                     fmt::format("{} is out of range (0, {:g}]", cell, max));
  }
  return value;
}

void add_row(const std::vector<std::string>& cells, const Columns& c, const std::string& path,
             int line, MeasuredCollectives* table) {
  if (cells.size() != c.header.size()) {
    throw InputError({path, line, 1}, "",
                     fmt::format("{} cells, but the header has {}", cells.size(), c.header.size()));
  }
  const std::string cell = c.collective >= 0 ? cells[c.collective] : "";
  const std::optional<std::string> collective = collective_name(cell);
  if (!collective) {
    throw InputError({path, line, c.collective + 1}, "collective",
                     fmt::format("'{}' is not a collective nccl-tests measures (all_reduce, "
                                 "all_gather, reduce_scatter, all_to_all, broadcast, reduce)",
                                 cell));
  }
  const double gpus = number_in(cells, c, c.gpus, path, line, kMaxGpus);
  if (gpus < 2 || gpus != std::floor(gpus)) {
    throw InputError({path, line, c.gpus + 1}, "gpus",
                     fmt::format("'{}' is not a member count of 2 or more", cells[c.gpus]));
  }
  CollectiveSample sample;
  sample.bytes = number_in(cells, c, c.size, path, line, kMaxBytes);
  sample.time_s = 1e-6 * number_in(cells, c, c.time, path, line, kMaxTimeUs);
  auto& curve = table->curves[{*collective, static_cast<int>(gpus)}];
  const auto at = std::lower_bound(curve.begin(), curve.end(), sample.bytes, smaller);
  if (at != curve.end() && at->bytes == sample.bytes) {
    throw InputError({path, line, c.size + 1}, "size_bytes",
                     fmt::format("{} on {} GPUs at {} bytes is measured twice", *collective,
                                 cells[c.gpus], cells[c.size]));
  }
  curve.insert(at, sample);
}

}  // namespace

double measured_time_s(const std::vector<CollectiveSample>& curve, double bytes) {
  if (bytes <= curve.front().bytes) return curve.front().time_s;
  const CollectiveSample& last = curve.back();
  if (bytes >= last.bytes) return last.time_s * bytes / last.bytes;
  const auto hi = std::lower_bound(curve.begin(), curve.end(), bytes, smaller);
  const auto lo = hi - 1;
  const double f = (bytes - lo->bytes) / (hi->bytes - lo->bytes);
  return lo->time_s + f * (hi->time_s - lo->time_s);
}

const std::vector<CollectiveSample>* MeasuredCollectives::find(std::string_view collective,
                                                               int gpus) const {
  const auto at = curves.find({std::string(collective), gpus});
  return at == curves.end() ? nullptr : &at->second;
}

MeasuredCollectives read_measured_collectives(const std::string& path, const SourceLocation& where,
                                              const std::string& field) {
  const auto lines =
      csv_lines(read_input_file(path, "the measured collectives table", where, field));
  if (lines.size() < 2) throw InputError({path, 0, 0}, "", "no measured rows");
  MeasuredCollectives table;
  const Columns columns = read_header(lines.front().cells, path, lines.front().number);
  for (auto line = lines.begin() + 1; line != lines.end(); ++line) {
    add_row(line->cells, columns, path, line->number, &table);
  }
  return table;
}

}  // namespace racksim::topo
