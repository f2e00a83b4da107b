#include "cli/command_line.h"

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "app/child_process.h"
#include "common/error.h"

namespace racksim::cli {

namespace po = boost::program_options;

po::variables_map parse_scenario_command(const std::vector<std::string>& args,
                                         const po::options_description& options) {
  po::positional_options_description positional;
  positional.add("scenario", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  po::notify(vm);
  return vm;
}

po::variables_map parse_options_only(const std::vector<std::string>& args,
                                     const po::options_description& options) {
  const po::positional_options_description no_positionals;
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(no_positionals).run(), vm);
  return vm;
}

std::optional<int> help_or_missing_scenario(const po::variables_map& vm,
                                            const po::options_description& options) {
  if (vm.count("help") || !vm.count("scenario")) {
    std::cout << options << "\n";
    return vm.count("help") ? 0 : 2;
  }
  return std::nullopt;
}

std::vector<std::string> set_overrides(const po::variables_map& vm) {
  return vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
}

int int_option(const po::variables_map& vm, const char* name, int min, int max) {
  const int value = vm[name].as<int>();
  if (value < min || value > max) {
    throw InputError({"command line", 0, 0}, fmt::format("--{}", name),
                     fmt::format("must be in [{}, {}], got {}", min, max, value));
  }
  return value;
}

int jobs_option(const po::variables_map& vm) {
  constexpr int kMaxJobs = 1024;
  return vm.count("jobs") ? int_option(vm, "jobs", 1, kMaxJobs) : app::default_jobs();
}

void batch_output(const po::variables_map& vm, std::optional<app::OutputDir>& out) {
  if (vm.count("out")) out.emplace(vm["out"].as<std::string>());
  if (vm.count("collect") && !out) {
    throw InputError({"command line", 0, 0}, "--collect", "--collect needs --out DIR");
  }
  if (vm.count("emit-jobs")) app::check_new_file(vm["emit-jobs"].as<std::string>(), "--emit-jobs");
}

}  // namespace racksim::cli
