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

// Parses `args` against `options` for a command that takes no bare argument: a stray word is an
// error (exit 2), not ignored. Not notified, so that --help is read before required options.
boost::program_options::variables_map parse_options_only(
    const std::vector<std::string>& args,
    const boost::program_options::options_description& options);

// With --help: prints `options`, returns 0. Without a scenario: prints them, returns 2.
// Otherwise nothing (the command goes on).
std::optional<int> help_or_missing_scenario(
    const boost::program_options::variables_map& vm,
    const boost::program_options::options_description& options);

// The --set overrides, in the order given.
std::vector<std::string> set_overrides(const boost::program_options::variables_map& vm);

// The integer option `name` (given or defaulted) if it lies in [min, max]; InputError naming
// the option otherwise. Checked before any work starts.
int int_option(const boost::program_options::variables_map& vm, const char* name, int min, int max);

// --jobs: the child processes to run at once, 1 .. 1024 (default: the CPUs).
int jobs_option(const boost::program_options::variables_map& vm);

// The output of a command that simulates many points (sweep, plan): --out when given, checked
// against --collect (which needs --out) and --emit-jobs (a file that must not exist yet). Filled
// in place: an OutputDir owns its staging directory and does not move.
void batch_output(const boost::program_options::variables_map& vm,
                  std::optional<app::OutputDir>& out);

}  // namespace racksim::cli
