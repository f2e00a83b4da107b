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
// the main thread waiting for the child as a study does. Writes 'r' once ready; never returns.
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
  waitpid(child, nullptr, 0);
  unregister_child_process(child);  // waits for the watcher, which exits holding the registry
  _exit(0);
}

TEST(Interrupt, StopsTheChildAndRemovesTheTemporary) {
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
  int status = 0;
  ASSERT_EQ(waitpid(process, &status, 0), process);  // returns: the watcher did not hang
  close(report[0]);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);
  EXPECT_FALSE(fs::exists(temporary));
  std::error_code ignored;
  fs::remove_all(temporary, ignored);
}

// The watcher's wait leaves the child to its starter: reaped by the watcher, a study's own
// waitpid would fail and unwind it through the destructors that remove the same temporaries
// the watcher is removing, and two removals of one tree can leave it behind.
TEST(Interrupt, WaitWithoutReapingLeavesTheChildToItsStarter) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(7);
  wait_without_reaping(child);
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, WNOHANG), child);  // ended, and still there to reap
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

}  // namespace
}  // namespace racksim
