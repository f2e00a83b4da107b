#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "analysis/report_compare.h"
#include "app/child_process.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/input_file.h"

namespace racksim::cli {

namespace po = boost::program_options;

namespace {

nlohmann::json read_report(const std::string& path) {
  const std::string text = read_input_file(path, "the report", {path, 0, 0}, "");
  if (text.empty()) throw InputError({path, 0, 0}, "", "cannot read the report: it is empty");
  // Reports nest a few levels; a deep document would exhaust the stack of the recursive walk.
  constexpr int kMaxDepth = 64;
  if (const int depth = json_nesting_depth(text); depth > kMaxDepth) {
    throw InputError(
        {path, 0, 0}, "",
        fmt::format("not a racksim report: nested {} levels deep (at most {})", depth, kMaxDepth));
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number too large
    throw InputError({path, 0, 0}, "", fmt::format("not a JSON report: {}", e.what()));
  }
}

}  // namespace

int compare_command(const std::vector<std::string>& args) {
  po::options_description options("racksim compare A/report.json B/report.json options");
  options.add_options()("help,h", "show this help")("changed", "show only the fields that differ")(
      "reports", po::value<std::vector<std::string>>(), "the two report.json files");
  po::positional_options_description positional;
  positional.add("reports", 2);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  const auto reports = vm.count("reports") ? vm["reports"].as<std::vector<std::string>>()
                                           : std::vector<std::string>{};
  if (reports.size() != 2) {
    throw InputError({"command line", 0, 0}, "", "compare needs two report.json files");
  }
  const auto fields = analysis::compare_reports(read_report(reports[0]), read_report(reports[1]));
  std::fputs(
      analysis::comparison_table(fields, reports[0], reports[1], vm.count("changed") > 0).c_str(),
      stdout);
  return 0;
}

}  // namespace racksim::cli
