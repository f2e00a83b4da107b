#include "common/interrupt.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace racksim {
namespace {

// The one registry of temporaries and children, shared with the watcher thread.
struct InterruptState {
  std::recursive_mutex mutex;  // recursive: without_interrupts() may register inside
  std::string activity = "starting";
  std::vector<std::filesystem::path> paths;
  std::vector<pid_t> children;
};

InterruptState& state() {
  static InterruptState instance;
  return instance;
}

sigset_t interrupt_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// Removes `path` and all below it, trying again while it exists: an entry that vanishes during a
// removal (a child's own clean-up) ends that attempt with an error.
void remove_tree(const std::filesystem::path& path) {
  std::error_code ignored;
  for (int attempt = 0; attempt < 3 && std::filesystem::exists(path, ignored); ++attempt) {
    std::filesystem::remove_all(path, ignored);
  }
}

// Runs in the watcher thread, never in a signal handler, so it may lock and allocate.
[[noreturn]] void handle_interrupt(int signal) {
  InterruptState& s = state();
  std::lock_guard lock(s.mutex);  // held until _exit: nothing registers new temporaries
  for (pid_t child : s.children) kill(child, SIGTERM);
  for (pid_t child : s.children) wait_without_reaping(child);
  for (const auto& path : s.paths) remove_tree(path);
  std::fprintf(stderr, "\nracksim: interrupted (%s) while %s; %s\n",
               signal == SIGINT ? "SIGINT" : "SIGTERM", s.activity.c_str(),
               s.paths.empty() ? "nothing was written"
                               : "its temporary files were removed and earlier results are "
                                 "untouched");
  std::fflush(stderr);
  _exit(128 + signal);
}

}  // namespace

void install_interrupt_watcher() {
  const sigset_t set = interrupt_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int signal = 0;
    while (sigwait(&set, &signal) != 0) {
    }
    handle_interrupt(signal);
  }).detach();
}

void without_interrupts(const std::function<void()>& critical) {
  std::lock_guard lock(state().mutex);
  critical();
}

std::string set_interrupt_activity(std::string activity) {
  std::lock_guard lock(state().mutex);
  std::swap(state().activity, activity);
  return activity;
}

RemoveOnInterrupt::RemoveOnInterrupt(std::filesystem::path path) : path_(std::move(path)) {
  std::lock_guard lock(state().mutex);
  state().paths.push_back(path_);
}

RemoveOnInterrupt::~RemoveOnInterrupt() {
  std::lock_guard lock(state().mutex);
  auto& paths = state().paths;
  if (auto it = std::find(paths.begin(), paths.end(), path_); it != paths.end()) paths.erase(it);
}

void register_child_process(pid_t pid) {
  std::lock_guard lock(state().mutex);
  state().children.push_back(pid);
}

void unregister_child_process(pid_t pid) {
  std::lock_guard lock(state().mutex);
  auto& children = state().children;
  children.erase(std::remove(children.begin(), children.end(), pid), children.end());
}

void wait_without_reaping(pid_t child) {
  siginfo_t info;
  while (waitid(P_PID, child, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
}

void unblock_interrupts_in_child() {
  const sigset_t set = interrupt_signals();
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace racksim
