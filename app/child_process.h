// Running `racksim` commands in child processes: SimGrid runs one simulation per process, so
// sweeps and calibrations simulate each point in a child of their own, several at a time.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/interrupt.h"

namespace racksim::app {

struct ChildJob {
  std::vector<std::string> argv;  // argv[0] is the program's path
  std::filesystem::path log;      // receives stdout and stderr
};

// Runs `jobs` with at most `parallel` at once and calls `on_done(index, exit_status)` as each
// ends (status 128 + signal when killed). Returns when all have ended.
void run_parallel(const std::vector<ChildJob>& jobs, int parallel,
                  const std::function<void(size_t, int)>& on_done);

// The path of the running racksim binary (what children are started with).
std::string self_executable();

// Forks a child that runs `in_child` (which must not return: it execs or _exits) and registers
// it to be stopped on interrupt, as one step. Throws if fork fails; `what` names the caller.
pid_t fork_registered(const std::function<void()>& in_child, const std::string& what);

// In a forked child: restores the interrupt signals, sends stdout and stderr to `log` and
// executes args[0] with `args`; exits 127 if that fails. Never returns.
[[noreturn]] void exec_in_child(const std::vector<std::string>& args,
                                const std::filesystem::path& log);

// How many child processes to run at once by default: the CPUs this process may use.
int default_jobs();

// A directory under the system temp directory, removed when this object goes away or the
// process is interrupted.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(const std::string& prefix);
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::unique_ptr<RemoveOnInterrupt> on_interrupt_;
};

// A shell word for `s`: as is when it is plain, else single-quoted.
std::string shell_quote(const std::string& s);

std::string read_text_file(const std::filesystem::path& path);

}  // namespace racksim::app
