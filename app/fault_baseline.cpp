#include "app/fault_baseline.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/child_process.h"
#include "app/training_run.h"
#include "common/interrupt.h"

namespace racksim::app {
namespace {

// In the child: simulate, write the figures (or the error) to `file`, and leave without running
// the parent's exit handlers or flushing its buffers.
[[noreturn]] void run_baseline_child(const TrainingRunPlan& plan, const std::string& file) {
  unblock_interrupts_in_child();
  int status = 0;
  nlohmann::json j;
  try {
    TrainingRunPlan healthy = plan;
    healthy.faults = {};
    const TrainingRun run = run_training(healthy);
    j["step_time_s"] = run.report.step_time_s;
    j["path_s"] = run.report.critical_path.by_kind_s;
  } catch (const std::exception& e) {
    j["error"] = e.what();
    status = 1;
  }
  std::ofstream(file) << j.dump();
  _exit(status);
}

}  // namespace

analysis::BaselineStep simulate_without_faults(const TrainingRunPlan& plan) {
  const ScopedTempDir temp("racksim-fault-baseline");
  const std::string file = (temp.path() / "baseline.json").string();
  std::fflush(nullptr);  // the child must not write the parent's buffered output again
  const pid_t pid = fork_registered([&] { run_baseline_child(plan, file); }, "fault baseline");
  int status = 0;
  waitpid(pid, &status, 0);
  unregister_child_process(pid);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(file));
  } catch (const std::exception&) {
    throw std::runtime_error(
        fmt::format("the step without faults (the baseline) did not finish (status {})", status));
  }
  if (j.contains("error")) {
    throw std::runtime_error("the step without faults (the baseline) failed: " +
                             j["error"].get<std::string>());
  }
  analysis::BaselineStep b;
  b.step_time_s = j["step_time_s"].get<double>();
  b.path_s = j["path_s"].get<std::array<double, analysis::kNumPathKinds>>();
  return b;
}

}  // namespace racksim::app
