// racksim: simulate LLM training on GPU clusters. See README.md.
//
// Exit codes: 0 ok, 2 bad input (the message names the file, line and field), 1 internal error,
// 130 interrupted by SIGINT (143 by SIGTERM) with the run's temporaries removed
// (docs/guarantees.md).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/program_options/errors.hpp>

#include "app/output_dir.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/interrupt.h"

namespace {

constexpr const char* kUsage = R"(usage: racksim <command> [options]

commands:
  run [SCENARIO] [--out DIR] [--set PATH=VALUE ...]
        simulate one training step and print where the time went; without SCENARIO, runs the
        built-in default (scenarios/default.textproto)
  collective --hardware PRESET --nodes N --op OP --ranks R --min-bytes A --max-bytes B [--json]
        nccl-tests-style bandwidth table of one collective on a simulated cluster
  topo SCENARIO|PRESET [--nodes N] [--dot FILE] [--json] [--build-platform]
        what a cluster is made of: counts, per-GPU bandwidth, fabric tiers and bisection,
        NIC choices and warnings
  replay TRACE [--hardware PRESET] [--nodes N] [--topology cluster|ring] [--compute recorded|model]
         [--mapping FILE] [--out DIR] [--set hardware.PATH=VALUE ...]
        simulate a recorded Chakra trace (TRACE.<rank>.et files) on a cluster or a ring
  memory SCENARIO [--set FIELD=VALUE ...] [--json]
        the memory ledger per pipeline stage without simulating: fits or the culprit, and
        what the fullest rank's largest layer keeps, part by part
  presets [--json]
        list the model, hardware and framework presets; --json: every field, for scripts
  bench [SCENARIO ...]
        how fast the simulator is: wall time, peak memory, activities per second per scenario
  sweep [SCENARIO] --set PATH=V1,V2,... [--jobs N] [--out DIR] [--emit-jobs FILE]
        simulate every combination of the values; a ranked table and sweep.csv
  calibrate --base SCENARIO --measured CSV --params PATH,PATH,... --out CAL
        fit efficiency parameters to measured step times; in-sample and held-out error
  compare A/report.json B/report.json
        two reports side by side with absolute and relative differences
  infer SCENARIO [--batch 1,8,64,512,2048] [--context N,...] [--phase decode|prefill] [--out DIR]
        decode (or prefill) step time, latency and cost per token against batch, with the
        weight-read floor, the compute-bound floor and the break-even batch
  racks SCENARIO [--scale-up 8,72,144,576] [--out DIR]
        rack-size study for a MoE model: training and decode step, all-to-all bytes inside and
        across scale-up domains, per domain size
  plan SCENARIO --tokens N --clusters PRESET:N,... [--set PATH=V1,V2,...] [--out DIR]
       [--emit-jobs FILE]
        a whole training run on each candidate cluster at its best layout: time, GPU-hours,
        energy, cost and goodput after failures; a table, plan.csv, plan.json and plan.svg

Run `racksim <command> --help` for a command's options.
)";

int dispatch(const std::string& command, const std::vector<std::string>& args) {
  if (command == "run") return racksim::cli::run_command(args);
  if (command == "collective") return racksim::cli::collective_command(args);
  if (command == "presets") return racksim::cli::presets_command(args);
  if (command == "bench") return racksim::cli::bench_command(args);
  if (command == "sweep") return racksim::cli::sweep_command(args);
  if (command == "calibrate") return racksim::cli::calibrate_command(args);
  if (command == "compare") return racksim::cli::compare_command(args);
  if (command == "replay") return racksim::cli::replay_command(args);
  if (command == "memory") return racksim::cli::memory_command(args);
  if (command == "topo") return racksim::cli::topo_command(args);
  if (command == "infer") return racksim::cli::infer_command(args);
  if (command == "racks") return racksim::cli::racks_command(args);
  if (command == "plan") return racksim::cli::plan_command(args);
  if (command == "help" || command == "--help" || command == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  throw racksim::InputError({"command line", 0, 0}, "",
                            fmt::format("unknown command '{}'\n{}", command, kUsage));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  racksim::install_interrupt_watcher();
  racksim::set_interrupt_activity(fmt::format("running `racksim {}`", argv[1]));
  try {
    return dispatch(argv[1], args);
  } catch (const racksim::InputError& e) {
    fmt::print(stderr, "racksim: error: {}\n", e.what());
    return 2;
  } catch (const racksim::app::OutputError& e) {
    fmt::print(stderr, "racksim: error: {}\n", e.what());
    return 1;
  } catch (const boost::program_options::error& e) {
    fmt::print(stderr, "racksim: error: command line: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "racksim: internal error: {}\n", e.what());
    return 1;
  }
}
