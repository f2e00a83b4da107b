#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "analysis/plan_table.h"
#include "analysis/sweep_table.h"
#include "app/child_process.h"
#include "app/output_dir.h"
#include "app/studies/plan.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/number.h"

namespace racksim::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

double parse_tokens(const std::string& text) {
  const double tokens = parse_finite_number(text).value_or(0);
  if (!(tokens >= 1)) {
    throw InputError({"command line", 0, 0}, "--tokens",
                     fmt::format("'{}' is not a number of training tokens (e.g. 15e12)", text));
  }
  return tokens;
}

struct ClusterWork {
  app::ClusterChoice cluster;
  app::SweepSpec sweep;
  app::SweepRun run;
};

// Every cluster's grid checked (validation, memory) before anything runs or is written.
std::vector<ClusterWork> plan_grids(const app::PlanSpec& spec) {
  std::vector<ClusterWork> work;
  for (size_t i = 0; i < spec.clusters.size(); ++i) {
    ClusterWork w{spec.clusters[i], app::cluster_sweep(spec, spec.clusters[i]), {}};
    w.run = app::plan_sweep(w.sweep);
    app::unfold_refused_points(w.sweep, &w.run);
    size_t pending = 0;
    for (const auto& p : w.run.points) pending += p.status == analysis::PointStatus::kPending;
    fmt::print(stderr, "[{}/{}] {} ({} GPUs): {} layouts, {} valid and fit in memory\n", i + 1,
               spec.clusters.size(), w.cluster.text, w.cluster.gpus, w.run.points.size(), pending);
    work.push_back(std::move(w));
  }
  return work;
}

void write_outputs(app::OutputDir& out, const std::vector<ClusterWork>& work,
                   const std::vector<analysis::PlanRow>& rows, double tokens,
                   const std::string& table) {
  out.write("plan.txt", [&](std::ostream& os) { os << table; });
  out.write("plan.csv", [&](std::ostream& os) { os << analysis::plan_csv(rows); });
  out.write("plan.json",
            [&](std::ostream& os) { os << analysis::plan_json(rows, tokens).dump(2) << "\n"; });
  out.write("plan.svg", [&](std::ostream& os) { analysis::plan_svg(rows, tokens, os); });
  for (const auto& w : work) {
    out.write("sweep-" + w.cluster.dir_name() + ".csv", [&](std::ostream& os) {
      os << analysis::sweep_csv(app::axis_fields(w.sweep), w.run.points);
    });
  }
  out.commit();
  fmt::print(
      "\nwrote {0}/plan.txt, plan.csv, plan.json, plan.svg, sweep-<cluster>.csv and each "
      "layout's report under {0}/<cluster>/points/\n",
      out.path().string());
}

po::options_description plan_options() {
  po::options_description options(
      "racksim plan SCENARIO --tokens N --clusters PRESET:N[@PRICE],... options");
  options.add_options()("help,h", "show this help")("tokens", po::value<std::string>(),
                                                    "training tokens of the whole run, e.g. 15e12")(
      "clusters", po::value<std::string>(),
      "candidates: PRESET:N servers (racks for NVL72), optionally @PRICE per GPU-hour")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "for every cluster: a field and its values, e.g. --set layout.pp=2,4 (swept), "
      "--set hardware.power.pue=1.1 (fixed); default axes layout.tp=1,2,4,8 layout.pp=1,2,4,8")(
      "jobs,j", po::value<int>(), "simulations at once (default: the CPUs)")(
      "out", po::value<std::string>(), "write plan.txt/csv/json/svg and every point's report here")(
      "emit-jobs", po::value<std::string>(),
      "write one `racksim run` command per layout to this file instead of simulating")(
      "collect", "read the points' reports from --out (after the emitted jobs ran)")(
      "scenario", po::value<std::string>(), "the model and training scenario");
  return options;
}

app::PlanSpec plan_spec(const po::variables_map& vm) {
  for (const char* required : {"tokens", "clusters"}) {
    if (!vm.count(required)) {
      throw InputError({"command line", 0, 0}, fmt::format("--{}", required), "is required");
    }
  }
  app::PlanSpec spec;
  spec.scenario = vm["scenario"].as<std::string>();
  spec.tokens = parse_tokens(vm["tokens"].as<std::string>());
  spec.clusters = app::parse_clusters(vm["clusters"].as<std::string>());
  spec.sets = set_overrides(vm);
  return spec;
}

// --emit-jobs: one `racksim run` per layout of every cluster, into a new file.
int emit_plan_jobs(const std::string& path, const std::vector<ClusterWork>& work,
                   const fs::path& out_dir) {
  std::string lines;
  for (const auto& w : work) {
    lines += app::sweep_job_lines(w.sweep, w.run, out_dir / w.cluster.dir_name());
  }
  app::write_new_file(path, lines);
  fmt::print("wrote {} (one command per layout; then run `racksim plan ... --out {} --collect`)\n",
             path, out_dir.string());
  return 0;
}

// Simulates (or, with `collect`, reads back) every cluster's layouts under `root`; one row per
// cluster, its best layout.
std::vector<analysis::PlanRow> plan_rows(const app::PlanSpec& spec, std::vector<ClusterWork>& work,
                                         const fs::path& root, bool collect, int jobs) {
  std::vector<analysis::PlanRow> rows;
  for (size_t i = 0; i < work.size(); ++i) {
    ClusterWork& w = work[i];
    const fs::path dir = root / w.cluster.dir_name();
    if (collect) {
      app::collect_sweep(&w.run, dir);
    } else {
      app::simulate_sweep(w.sweep, &w.run, dir, jobs, [&](size_t done, size_t total) {
        fmt::print(stderr, "\r[{}/{}] {}: {}/{} layouts simulated", i + 1, work.size(),
                   w.cluster.text, done, total);
        if (done == total) fmt::print(stderr, "\n");
        std::fflush(stderr);
      });
    }
    rows.push_back(app::plan_row(spec, w.cluster, w.sweep, w.run, dir));
  }
  return rows;
}

}  // namespace

int plan_command(const std::vector<std::string>& args) {
  const po::options_description options = plan_options();
  const po::variables_map vm = parse_scenario_command(args, options);
  if (auto code = help_or_missing_scenario(vm, options)) return *code;
  const app::PlanSpec spec = plan_spec(vm);
  const int jobs = jobs_option(vm);
  std::optional<app::OutputDir> out;
  batch_output(vm, out);

  std::vector<ClusterWork> work = plan_grids(spec);
  const fs::path out_dir = out ? out->path() : fs::path("plan-out");
  if (vm.count("emit-jobs"))
    return emit_plan_jobs(vm["emit-jobs"].as<std::string>(), work, out_dir);
  std::optional<app::ScopedTempDir> temp;
  if (!out) temp.emplace("racksim-plan");
  const fs::path root = out ? out->path() : temp->path();
  const bool collect = vm.count("collect") > 0;
  if (out && !collect) {
    out->write(".plan-started", [](std::ostream& os) { os << "racksim plan\n"; });
    out->commit();
  }
  const auto rows = plan_rows(spec, work, root, collect, jobs);
  const std::string table = analysis::plan_table(rows, spec.tokens);
  std::fputs(table.c_str(), stdout);
  if (out) write_outputs(*out, work, rows, spec.tokens, table);
  return 0;
}

}  // namespace racksim::cli
