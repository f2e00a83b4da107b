// What Ctrl-C (SIGINT) and SIGTERM do: racksim removes the temporary files and directories of
// the run in progress, stops the child processes it started, says what was interrupted and
// exits 130 (SIGINT) or 143 (SIGTERM). Finished results stay as they were.
//
// Signals are process-wide, so this state is too: main() installs the watcher once, and the
// code that creates temporaries registers them for as long as they exist.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include <sys/types.h>

namespace racksim {

// Blocks SIGINT and SIGTERM in every thread and starts a thread that waits for them. Call once,
// first thing in main(), before any other thread exists.
void install_interrupt_watcher();

// What the process is doing, for the line printed on an interrupt ("simulating", "writing
// timeline.json.gz"). Returns the previous activity.
std::string set_interrupt_activity(std::string activity);

// Runs `critical` while the watcher waits: an interrupt that arrives meanwhile is handled when
// it returns. Creating a temporary and registering it must be one step, or an interrupt between
// the two leaves the temporary behind. Never fork inside: the child would inherit a held lock.
void without_interrupts(const std::function<void()>& critical);

// A path removed (recursively) if the process is interrupted while this object lives.
class RemoveOnInterrupt {
 public:
  explicit RemoveOnInterrupt(std::filesystem::path path);
  ~RemoveOnInterrupt();
  RemoveOnInterrupt(const RemoveOnInterrupt&) = delete;
  RemoveOnInterrupt& operator=(const RemoveOnInterrupt&) = delete;

 private:
  std::filesystem::path path_;
};

// A child process sent SIGTERM (and waited for) if this process is interrupted.
void register_child_process(pid_t pid);
void unregister_child_process(pid_t pid);

// Returns once `child` has ended, leaving it to be reaped by whoever started it: how the watcher
// waits for the children it stops. Reaped by the watcher, the starter's own waitpid would fail
// and unwind it through the destructors that remove the temporaries the watcher is removing.
void wait_without_reaping(pid_t child);

// The signal mask a child process must start with (the watcher blocks the signals in this
// process; a child that keeps them blocked could not be interrupted). Call in the child between
// fork() and exec().
void unblock_interrupts_in_child();

}  // namespace racksim
