#include <cstdio>
#include <iostream>

#include <boost/program_options.hpp>

#include "app/studies/bench.h"
#include "cli/commands.h"

namespace racksim::cli {

namespace po = boost::program_options;

int bench_command(const std::vector<std::string>& args) {
  po::options_description options("racksim bench [SCENARIO ...] options");
  options.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>()->composing(), "override for every scenario")(
      "scenario", po::value<std::vector<std::string>>(), "scenarios (default: the built-in one)");
  po::positional_options_description positional;
  positional.add("scenario", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  const auto overrides =
      vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  auto scenarios = vm.count("scenario") ? vm["scenario"].as<std::vector<std::string>>()
                                        : std::vector<std::string>{""};
  std::vector<app::BenchFigures> rows;
  for (const auto& s : scenarios) {
    rows.push_back(app::bench_scenario("/proc/self/exe", s, overrides));
    std::fputs(app::bench_table({rows.back()}).c_str(), stderr);  // progress
  }
  std::fputs(app::bench_table(rows).c_str(), stdout);
  return 0;
}

}  // namespace racksim::cli
