#include "app/child_process.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "common/interrupt.h"

namespace racksim::app {

namespace fs = std::filesystem;

void exec_in_child(const std::vector<std::string>& args, const std::filesystem::path& log) {
  unblock_interrupts_in_child();
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
  }
  std::vector<std::string> owned = args;
  std::vector<char*> argv;
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  _exit(127);
}

pid_t fork_registered(const std::function<void()>& in_child, const std::string& what) {
  // The child waits at a gate until the parent has registered it. Forking under the interrupt
  // lock instead would hand the child a copy of a held lock, and a child that runs racksim code
  // without exec would deadlock on it. An interrupt before registration ends the parent, which
  // closes the gate's write end, and the child leaves without doing anything.
  int gate[2];
  if (pipe2(gate, O_CLOEXEC) != 0) throw std::runtime_error(what + ": pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    close(gate[1]);
    char go = 0;
    if (read(gate[0], &go, 1) != 1) _exit(128 + SIGTERM);
    close(gate[0]);
    in_child();
    _exit(127);  // in_child must not return; leave without the parent's exit handlers
  }
  close(gate[0]);
  if (pid > 0) register_child_process(pid);
  const bool opened = pid > 0 && write(gate[1], "g", 1) == 1;
  close(gate[1]);
  if (pid < 0) throw std::runtime_error(what + ": fork failed");
  if (!opened) throw std::runtime_error(what + ": cannot start the child process");
  return pid;
}

namespace {

pid_t spawn(const ChildJob& job) {
  return fork_registered([&] { exec_in_child(job.argv, job.log); }, "running a point");
}

int exit_status(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void run_parallel(const std::vector<ChildJob>& jobs, int parallel,
                  const std::function<void(size_t, int)>& on_done) {
  parallel = std::max(parallel, 1);
  std::map<pid_t, size_t> running;
  size_t next = 0;
  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() && running.size() < static_cast<size_t>(parallel)) {
      running[spawn(jobs[next])] = next;
      ++next;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) throw std::runtime_error("waitpid failed");
    unregister_child_process(pid);
    auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    const size_t index = it->second;
    running.erase(it);
    on_done(index, exit_status(status));
  }
}

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : p.string();
}

int default_jobs() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(CPU_COUNT(&set), 1);
  return 1;
}

namespace {

// A new directory under the system temp directory; the caller removes it.
fs::path make_temp_dir(const std::string& prefix) {
  std::random_device rd;
  for (int i = 0; i < 100; ++i) {
    fs::path p = fs::temp_directory_path() / fmt::format("{}-{}", prefix, rd());
    if (fs::create_directory(p)) return p;
  }
  throw std::runtime_error("cannot create a temporary directory");
}

}  // namespace

ScopedTempDir::ScopedTempDir(const std::string& prefix) {
  without_interrupts([&] {
    path_ = make_temp_dir(prefix);
    on_interrupt_ = std::make_unique<RemoveOnInterrupt>(path_);
  });
}

ScopedTempDir::~ScopedTempDir() {
  // Under the interrupt lock, and unregistered in the same step: an interrupt meanwhile would
  // remove the same tree, and two removals of one tree can each stop at the other's deletions.
  without_interrupts([&] {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
    on_interrupt_.reset();
  });
}

std::string shell_quote(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789_-+=.,/:@%") == std::string::npos;
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string read_text_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace racksim::app
