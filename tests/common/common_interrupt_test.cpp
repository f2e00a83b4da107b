// What an interrupt does to a process's registered children and temporaries, run in a forked
// process of its own (the interrupt ends the process it lands in).
#include "common/interrupt.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace racksim {
namespace {

namespace fs = std::filesystem;

// In the forked process: the watcher installed, a temporary directory and one child registered,
// the main thread waiting for the child as a study does. Writes 'r' once ready, then 'y' if its
// own waitpid got the child (or 'n' if the watcher reaped it first), and never returns.
[[noreturn]] void interrupted_process(int report, const fs::path& temporary) {
  const int null = open("/dev/null", O_WRONLY);
  dup2(null, 2);  // the watcher's message
  install_interrupt_watcher();
  std::error_code error;
  fs::create_directories(temporary / "inside", error);
  if (error) _exit(4);  // never back into the test runner: the parent sees no 'r' and fails
  const RemoveOnInterrupt on_interrupt(temporary);
  const pid_t child = fork();
  if (child == 0) {
    unblock_interrupts_in_child();
    pause();
    _exit(0);
  }
  register_child_process(child);
  if (write(report, "r", 1) != 1) _exit(3);
  const char reaped = waitpid(child, nullptr, 0) == child ? 'y' : 'n';
  if (write(report, &reaped, 1) != 1) _exit(3);
  unregister_child_process(child);  // waits for the watcher, which exits holding the registry
  _exit(0);
}

TEST(Interrupt, StopsTheChildRemovesTheTemporaryAndLeavesTheReapingToItsWaiter) {
  const fs::path temporary =
      fs::temp_directory_path() / ("racksim-interrupt-test-" + std::to_string(getpid()));
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t process = fork();
  ASSERT_GE(process, 0);
  if (process == 0) interrupted_process(report[1], temporary);
  close(report[1]);
  char ready = 0;
  ASSERT_EQ(read(report[0], &ready, 1), 1);
  ASSERT_EQ(ready, 'r');
  kill(process, SIGINT);
  char reaped = 0;
  EXPECT_EQ(read(report[0], &reaped, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(process, &status, 0), process);
  close(report[0]);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);
  // Reaped by the watcher, the waiter's waitpid would fail: a study then unwinds through the
  // destructors that remove the same temporaries, and two removals of one tree can leave it.
  EXPECT_EQ(reaped, 'y');
  EXPECT_FALSE(fs::exists(temporary));
  std::error_code ignored;
  fs::remove_all(temporary, ignored);
}

}  // namespace
}  // namespace racksim
