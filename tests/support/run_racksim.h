// Runs the racksim binary in a child process (SimGrid allows one simulation per process, and
// exit codes and files on disk are part of what the CLI promises).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace racksim::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs RACKSIM_BINARY with `args` (no shell quoting needed) in the current directory.
CommandResult run_racksim(const std::vector<std::string>& args);

// RACKSIM_BINARY's argument vector and environment, built before fork(): the child of a process
// with other threads (ASan's, the thread pools of libraries) must not allocate before exec, as a
// lock another thread held at fork() stays held in the child and the child hangs.
class ChildCommand {
 public:
  // `env`: NAME=VALUE entries that replace or join the current environment's.
  explicit ChildCommand(const std::vector<std::string>& args, std::vector<std::string> env = {});
  ChildCommand(const ChildCommand&) = delete;
  ChildCommand& operator=(const ChildCommand&) = delete;
  // In the forked child: replaces the process with the command (exit 127 if that fails). Calls
  // nothing that allocates.
  [[noreturn]] void exec() const;

 private:
  std::vector<std::string> args_, env_;
  std::vector<char*> argv_, envp_;
};

// run_racksim with every file the process writes (stdout and stderr too) limited to
// `limit_bytes`, so that writes past it fail as on a full disk.
CommandResult run_racksim_with_file_size_limit(const std::vector<std::string>& args,
                                               long limit_bytes);

// A fresh empty directory under the system temp directory, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Writes `content` to path()/name and returns the full path.
  std::string write(const std::string& name, const std::string& content) const;

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& path);

// The decompressed contents of a gzip file (timeline.json.gz); "" when it cannot be read.
std::string read_gzip_file(const std::filesystem::path& path);

// `racksim run` of `scenario_text` (written into `dir`) with `--set` overrides, writing
// report.json alone into a fresh folder of `dir`; the report is null when the run failed.
struct ReportRun {
  int exit_code = -1;
  std::string err;
  nlohmann::json report;
};
ReportRun run_scenario_report(const TempDir& dir, const std::string& scenario_text,
                              const std::vector<std::string>& sets);
// The same for a scenario file at `path`.
ReportRun run_file_report(const TempDir& dir, const std::string& path,
                          const std::vector<std::string>& sets);
// The step time (s) `racksim run` reports for the scenario file at `path` with `--set`
// overrides; a failed run fails the test and gives NaN.
double simulated_step_s(const std::string& path, const std::vector<std::string>& sets);

}  // namespace racksim::testing
