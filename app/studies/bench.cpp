#include "app/studies/bench.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/child_process.h"
#include "common/interrupt.h"
#include "config/default_scenario.h"
#include "config/scenario_loader.h"

namespace racksim::app {

namespace fs = std::filesystem;

namespace {

// Runs argv with stdout and stderr sent to `log`; returns the exit status and fills `usage`.
int run_child(const std::vector<std::string>& args, const fs::path& log, struct rusage* usage) {
  const pid_t pid = fork_registered([&] { exec_in_child(args, log); }, "bench");
  int status = 0;
  wait4(pid, &status, 0, usage);
  unregister_child_process(pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double cpu_seconds(const struct rusage& usage) {
  const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

BenchFigures bench_scenario(const std::string& self, const std::string& scenario,
                            const std::vector<std::string>& overrides) {
  // Bad input stops here, with its message, before any child starts.
  if (scenario.empty()) {
    config::load_scenario_text(std::string(config::default_scenario_text()),
                               std::string(config::kDefaultScenarioPath), overrides);
  } else {
    config::load_scenario(scenario, overrides);
  }
  const ScopedTempDir temp("racksim-bench");
  const fs::path& dir = temp.path();
  std::vector<std::string> args{self, "run"};
  if (!scenario.empty()) args.push_back(scenario);
  args.push_back("--out");
  args.push_back((dir / "out").string());
  for (const auto& o : overrides) {
    args.push_back("--set");
    args.push_back(o);
  }
  struct rusage usage {};
  const auto start = std::chrono::steady_clock::now();
  const int status = run_child(args, dir / "log", &usage);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (status != 0) {
    const std::string log = slurp(dir / "log");
    throw std::runtime_error(
        fmt::format("bench: `racksim run {}` failed ({}):\n{}", scenario, status, log));
  }
  const auto report = nlohmann::json::parse(slurp(dir / "out" / "report.json"));
  BenchFigures f;
  f.scenario = scenario.empty() ? "default (built in)" : scenario;
  f.gpus = report["mfu"]["gpus"].get<uint32_t>();
  f.step_time_s = report["step_time_s"].get<double>();
  f.ops = report["sim"]["ops"].get<uint64_t>();
  f.events = report["sim"]["events"].get<uint64_t>();
  f.sim_wall_s = report["sim"]["wall_s"].get<double>();
  f.wall_s = wall;
  f.cpu_s = cpu_seconds(usage);
  f.fidelity = report["sim"]["fidelity"].get<std::string>();
  f.peak_rss_bytes = static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports KiB
  return f;
}

std::string bench_table(const std::vector<BenchFigures>& rows) {
  // activities per CPU second: the cost that stays put when the machine is loaded.
  std::string out =
      fmt::format("{:<44} {:>10} {:>6} {:>11} {:>11} {:>9} {:>9} {:>9} {:>12} {:>9} {:>10}\n",
                  "scenario", "fidelity", "GPUs", "ops", "activities", "sim (s)", "wall (s)",
                  "CPU (s)", "act./CPU s", "RSS (MB)", "step (s)");
  for (const auto& r : rows) {
    out += fmt::format(
        "{:<44} {:>10} {:>6} {:>11} {:>11} {:>9.2f} {:>9.2f} {:>9.2f} {:>12.0f} {:>9.0f} "
        "{:>10.4f}\n",
        r.scenario, r.fidelity, r.gpus, r.ops, r.events, r.sim_wall_s, r.wall_s, r.cpu_s,
        r.cpu_s > 0 ? r.events / r.cpu_s : 0.0, r.peak_rss_bytes / 1e6, r.step_time_s);
  }
  return out;
}

}  // namespace racksim::app
