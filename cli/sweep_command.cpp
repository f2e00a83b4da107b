#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "analysis/sweep_table.h"
#include "app/child_process.h"
#include "app/output_dir.h"
#include "app/studies/sweep.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/error.h"

namespace racksim::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

void print_progress(size_t done, size_t total) {
  constexpr int kWidth = 40;
  const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
  fmt::print(stderr, "\r[{}{}] {}/{} points simulated", std::string(filled, '#'),
             std::string(kWidth - filled, '.'), done, total);
  if (done == total) fmt::print(stderr, "\n");
  std::fflush(stderr);
}

po::options_description sweep_options() {
  po::options_description options("racksim sweep [SCENARIO] --set PATH=V1,V2,... options");
  options.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "a field and its values, e.g. --set layout.tp=1,2,4,8 (repeatable; one value: fixed; "
      "layout.pipeline_layout's values, which hold commas, separated by ';')")(
      "jobs,j", po::value<int>(), "simulations at once (default: the CPUs)")(
      "out", po::value<std::string>(), "write sweep.csv, sweep.txt and each point's report here")(
      "emit-jobs", po::value<std::string>(),
      "write one `racksim run` command per point to this file instead of simulating")(
      "collect", "read the points' reports from --out (after the emitted jobs ran)")(
      "keep-timelines", "each point also writes timeline.json.gz and pipeline.svg")(
      "scenario", po::value<std::string>(), "scenario file (default: the built-in one)");
  return options;
}

// --emit-jobs: one `racksim run` per point into a new file, and the table of what they will be.
int emit_sweep_jobs(const po::variables_map& vm, const app::SweepSpec& spec,
                    const app::SweepRun& run, const fs::path& out_dir) {
  const std::string path = vm["emit-jobs"].as<std::string>();
  app::write_new_file(path, app::sweep_job_lines(spec, run, out_dir));
  fmt::print(
      "wrote {} (one command per point to simulate; then run `racksim sweep ... --out {} "
      "--collect`)\n",
      path, out_dir.string());
  std::fputs(analysis::sweep_table(app::axis_fields(spec), run.points).c_str(), stdout);
  return 0;
}

void write_sweep_outputs(app::OutputDir& out, const app::SweepSpec& spec, const app::SweepRun& run,
                         const std::string& table) {
  out.write("sweep.csv", [&](std::ostream& os) {
    os << analysis::sweep_csv(app::axis_fields(spec), run.points);
  });
  out.write("sweep.txt", [&](std::ostream& os) { os << table; });
  out.commit();
  fmt::print("\nwrote {0}/sweep.csv, {0}/sweep.txt and each point's report under {0}/points/\n",
             out.path().string());
}

}  // namespace

int sweep_command(const std::vector<std::string>& args) {
  const po::options_description options = sweep_options();
  const po::variables_map vm = parse_scenario_command(args, options);
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  const int jobs = jobs_option(vm);
  const auto sets = set_overrides(vm);
  app::SweepSpec spec =
      app::parse_sweep(vm.count("scenario") ? vm["scenario"].as<std::string>() : "", sets);
  spec.keep_timelines = vm.count("keep-timelines") > 0;
  std::optional<app::OutputDir> out;
  batch_output(vm, out);

  app::SweepRun run = app::plan_sweep(spec);
  if (const auto invalid = app::all_points_invalid(run)) {
    throw InputError({"--set", 0, 0}, "--set",
                     fmt::format("every point of the sweep is invalid; the first: {}", *invalid));
  }
  const fs::path out_dir = out ? out->path() : fs::path("sweep-out");
  if (vm.count("emit-jobs")) return emit_sweep_jobs(vm, spec, run, out_dir);
  if (vm.count("collect")) {
    app::collect_sweep(&run, out->path());
  } else {
    std::optional<app::ScopedTempDir> temp;
    if (!out) temp.emplace("racksim-sweep");
    const fs::path work = out ? out->path() : temp->path();
    if (out) {
      out->write(".sweep-started", [](std::ostream& os) { os << "racksim sweep\n"; });
      out->commit();
    }
    app::simulate_sweep(spec, &run, work, jobs, print_progress);
  }
  const std::string table = analysis::sweep_table(app::axis_fields(spec), run.points);
  std::fputs(table.c_str(), stdout);
  if (out) write_sweep_outputs(*out, spec, run, table);
  return 0;
}

}  // namespace racksim::cli
