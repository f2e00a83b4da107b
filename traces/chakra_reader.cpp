#include "traces/chakra_reader.h"

#include <filesystem>
#include <map>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "traces/chakra_json.h"
#include "traces/chakra_records.h"

namespace racksim::chakra {

namespace fs = std::filesystem;

namespace {

InputError prefix_error(const std::string& prefix, const std::string& detail) {
  return InputError(SourceLocation{prefix, 0, 0}, "", detail);
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// rank -> file, for every `<base>.<rank>.<extension>` in the prefix's directory.
std::map<uint64_t, std::string> rank_files(const fs::path& dir, const std::string& base) {
  std::map<uint64_t, std::string> files;
  std::error_code ec;
  fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec);
  if (ec) return files;
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= base.size() + 1 || name.compare(0, base.size(), base) != 0 ||
        name[base.size()] != '.') {
      continue;
    }
    static const std::regex kRankFile(R"((\d{1,9})\.(et|et\.gz|json))");
    std::smatch m;
    const std::string rest = name.substr(base.size() + 1);
    if (!std::regex_match(rest, m, kRankFile)) continue;
    const uint64_t rank = std::stoull(m[1].str());
    auto [slot, inserted] = files.try_emplace(rank, (dir / name).string());
    if (!inserted) {
      throw prefix_error((dir / base).string(),
                         fmt::format("rank {} has two files: {} and {}", rank, slot->second,
                                     (dir / name).string()));
    }
  }
  return files;
}

RankTable read_rank(const std::string& file, Interner& names, std::vector<std::string>& warnings) {
  RankTable table;
  table.file = file;
  RankTableBuilder builder(table, names, warnings);
  if (ends_with(file, ".json")) {
    read_json_file(file, builder);
  } else {
    read_et_file(file, builder.handlers());
  }
  return table;
}

}  // namespace

std::vector<std::string> find_rank_files(const std::string& prefix, int expected_ranks) {
  std::vector<std::string> result;
  std::error_code ec;
  if (fs::is_regular_file(prefix, ec)) {
    result.push_back(prefix);
  } else {
    const fs::path path(prefix);
    const auto files = rank_files(path.parent_path(), path.filename().string());
    if (files.empty()) {
      throw prefix_error(prefix, fmt::format("no trace files: expected {}.0.et, {}.1.et, ... (or "
                                             ".et.gz, .json), or the path of one trace file",
                                             prefix, prefix));
    }
    std::vector<uint64_t> ranks;
    for (const auto& [rank, file] : files) ranks.push_back(rank);
    for (const auto& [rank, file] : files) {
      if (rank != result.size()) {
        throw prefix_error(prefix, fmt::format("the file of rank {} is missing (found ranks {})",
                                               result.size(), fmt::join(ranks, ", ")));
      }
      result.push_back(file);
    }
  }
  if (expected_ranks >= 0 && result.size() != static_cast<size_t>(expected_ranks)) {
    throw prefix_error(prefix, fmt::format("{} rank file(s) found but {} ranks expected",
                                           result.size(), expected_ranks));
  }
  return result;
}

ChakraTrace read_chakra_trace(const std::string& prefix, const ReadOptions& options) {
  const std::vector<std::string> files = find_rank_files(prefix, options.expected_ranks);
  Interner names;
  std::vector<std::string> warnings;
  std::vector<RankTable> tables;
  tables.reserve(files.size());
  for (const std::string& file : files) tables.push_back(read_rank(file, names, warnings));
  return build_trace_graph(tables, names, options.compute, std::move(warnings));
}

ChakraTrace read_chakra_bytes(std::string_view bytes, const ReadOptions& options) {
  Interner names;
  std::vector<std::string> warnings;
  std::vector<RankTable> tables(1);
  tables[0].file = "<memory>";
  RankTableBuilder builder(tables[0], names, warnings);
  read_et_bytes(bytes, tables[0].file, builder.handlers());
  return build_trace_graph(tables, names, options.compute, std::move(warnings));
}

}  // namespace racksim::chakra
