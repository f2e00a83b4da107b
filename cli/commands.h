// The racksim subcommands. Each is a thin shell: it parses its options and calls the app
// library. They return the process exit code (0 ok) and throw InputError for bad input.
#pragma once

#include <string>
#include <vector>

namespace racksim::cli {

int run_command(const std::vector<std::string>& args);
int collective_command(const std::vector<std::string>& args);
int presets_command(const std::vector<std::string>& args);
int bench_command(const std::vector<std::string>& args);
int sweep_command(const std::vector<std::string>& args);
int calibrate_command(const std::vector<std::string>& args);
int compare_command(const std::vector<std::string>& args);
int replay_command(const std::vector<std::string>& args);
int memory_command(const std::vector<std::string>& args);
int topo_command(const std::vector<std::string>& args);

}  // namespace racksim::cli
