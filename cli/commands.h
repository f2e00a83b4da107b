// The racksim subcommands. Each is a thin shell: it parses its options and calls the app
// library. They return the process exit code (0 ok) and throw InputError for bad input.
#pragma once

#include <cstdint>
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
int infer_command(const std::vector<std::string>& args);
int racks_command(const std::vector<std::string>& args);
int plan_command(const std::vector<std::string>& args);
// "1,8,64" -> {1, 8, 64}; throws InputError naming `option` for anything else.
std::vector<int64_t> parse_int_list(const std::string& option, const std::string& list);

}  // namespace racksim::cli
