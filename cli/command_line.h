// What the `racksim COMMAND [SCENARIO] [options]` commands parse the same way: one positional
// scenario file, --help, and repeatable --set overrides.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "app/output_dir.h"

namespace racksim::cli {

// Parses `args` against `options`, the first bare argument being the option "scenario".
boost::program_options::variables_map parse_scenario_command(
    const std::vector<std::string>& args,
    const boost::program_options::options_description& options);

// With --help: prints `options`, returns 0. Without a scenario: prints them, returns 2.
// Otherwise nothing (the command goes on).
std::optional<int> help_or_missing_scenario(
    const boost::program_options::variables_map& vm,
    const boost::program_options::options_description& options);

// The --set overrides, in the order given.
std::vector<std::string> set_overrides(const boost::program_options::variables_map& vm);

// The output of a command that simulates many points (sweep, plan): --out when given, checked
// against --collect (which needs --out) and --emit-jobs (a file that must not exist yet).
std::optional<app::OutputDir> batch_output(const boost::program_options::variables_map& vm);

}  // namespace racksim::cli
