// `racksim bench`: how fast the simulator is. Each scenario runs in a child process (`racksim
// run`, one simulation per process) and is measured from outside: wall time, peak resident
// memory, CPU seconds (user + system: what a loaded machine does not inflate), and the
// operations and SimGrid activities it simulated per second.
#pragma once

#include <string>
#include <vector>

namespace racksim::app {

struct BenchFigures {
  std::string scenario;
  uint32_t gpus = 0;
  double step_time_s = 0;  // simulated
  uint64_t ops = 0;        // event-graph operations
  uint64_t events = 0;     // SimGrid activities
  double sim_wall_s = 0;   // the replay alone
  double wall_s = 0;       // the whole process: parse, build, simulate, report
  double cpu_s = 0;        // the whole process's CPU time, user + system
  double peak_rss_bytes = 0;
  std::string fidelity;  // the one that ran (report.json sim.fidelity)
};

// Runs `self run SCENARIO --out <tmp> [--set ...]` and measures it. An empty scenario means
// the built-in default. Throws std::runtime_error if the run fails.
BenchFigures bench_scenario(const std::string& self, const std::string& scenario,
                            const std::vector<std::string>& overrides);

std::string bench_table(const std::vector<BenchFigures>& rows);

}  // namespace racksim::app
