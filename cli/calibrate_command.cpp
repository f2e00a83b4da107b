#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "app/child_process.h"
#include "app/output_dir.h"
#include "app/studies/calibrate.h"
#include "app/studies/calibrate_json.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/error.h"
#include "config/calibration_file.h"

namespace racksim::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// Nothing the user wrote is overwritten: only a missing file or one racksim wrote before, in a
// writable directory; checked before the first simulation.
void check_writable(const std::string& path) {
  app::check_file_to_write(path, "--out", [](const fs::path& existing) {
    std::ifstream in(existing);
    std::string first;
    std::getline(in, first);
    return first == config::kCalibrationMarker;
  });
}

// The same for --json: a file racksim calibrate wrote as JSON before, or a new one.
void check_json_writable(const std::string& path) {
  app::check_file_to_write(path, "--json", app::written_by_calibrate);
}

// The report as JSON, for --json: one row per line.
std::string json_text(const app::CalibrationSpec& spec, const app::CalibrationResult& result) {
  return app::json_text_one_entry_per_line(app::calibration_json(spec, result));
}

po::options_description calibrate_options() {
  po::options_description options("racksim calibrate options");
  options.add_options()("help,h", "show this help")("base", po::value<std::string>(),
                                                    "the base scenario file")(
      "measured", po::value<std::string>(),
      "CSV of measured runs (see README, Calibration); several files: A.csv,B.csv")(
      "params", po::value<std::string>(),
      "comma-separated hardware fields to fit, e.g. "
      "hardware.compute.gemm,hardware.compute.attention")("out", po::value<std::string>(),
                                                          "the calibration file to write")(
      "set", po::value<std::vector<std::string>>()->composing(), "override for every point")(
      "jobs,j", po::value<int>(), "simulations at once (default: the CPUs)")(
      "max-evals", po::value<int>()->default_value(40),
      "fit evaluations (each simulates all points)")(
      "holdout-max-evals", po::value<int>()->default_value(20), "evaluations per held-out refit")(
      "loss", po::value<std::string>()->default_value("soft-l1"),
      "what the fit minimizes: soft-l1 (of the log errors, robust to an odd row) or abs (the "
      "mean |predicted / measured - 1|, the figure a MAPE target states)")(
      "holdout", po::value<std::string>()->default_value("auto"),
      "auto, none, loo, group, largest (fit the smaller groups, predict the largest) or kfold:K")(
      "fit-every", po::value<int>()->default_value(1),
      "fit on every Nth row only (each held-out refit on every Nth of its rows); predict all")(
      "json", po::value<std::string>(),
      "also write the whole report as JSON to this file (fitted values, errors as fractions, "
      "every row's times); replaces only a file racksim calibrate wrote")(
      "floor-only",
      "print the floor the measurements put under any model of kernels and collectives, and "
      "the rows that set it; simulate and fit nothing (--params and --out not needed)");
  return options;
}

// The options a run needs, and the files it will write, checked before anything is simulated.
void check_options(const po::variables_map& vm, bool floor_only) {
  for (const char* required : {"base", "measured", "params"}) {
    if (!vm.count(required) && !(floor_only && std::string(required) == "params")) {
      throw InputError({"command line", 0, 0}, fmt::format("--{}", required),
                       fmt::format("calibrate needs --{}", required));
    }
  }
  if (floor_only && vm.count("out")) {
    throw InputError({"command line", 0, 0}, "--out", "--floor-only fits nothing to write");
  }
  if (vm.count("out")) check_writable(vm["out"].as<std::string>());
  if (!vm.count("json")) return;
  const std::string json_path = vm["json"].as<std::string>();
  if (vm.count("out") &&
      fs::weakly_canonical(json_path) == fs::weakly_canonical(vm["out"].as<std::string>())) {
    throw InputError({"command line", 0, 0}, "--json", "--json and --out name the same file");
  }
  check_json_writable(json_path);
}

analysis::FitLoss loss_option(const std::string& name) {
  if (name == "soft-l1") return analysis::FitLoss::kSoftL1Log;
  if (name == "abs") return analysis::FitLoss::kAbsoluteRelative;
  throw InputError({"command line", 0, 0}, "--loss",
                   fmt::format("'{}' is not a loss: soft-l1 or abs", name));
}

app::CalibrationSpec calibration_spec(const po::variables_map& vm, bool floor_only) {
  app::CalibrationSpec spec;
  spec.base = vm["base"].as<std::string>();
  spec.measured = app::read_measured_csvs(split_list(vm["measured"].as<std::string>()));
  if (vm.count("set")) spec.base_overrides = vm["set"].as<std::vector<std::string>>();
  if (floor_only) return spec;
  spec.params = split_list(vm["params"].as<std::string>());
  spec.jobs = jobs_option(vm);
  spec.max_evaluations = int_option(vm, "max-evals", 1, 100000);
  spec.holdout_max_evaluations = int_option(vm, "holdout-max-evals", 1, 100000);
  spec.loss = loss_option(vm["loss"].as<std::string>());
  spec.holdout = vm["holdout"].as<std::string>();
  spec.fit_every = int_option(vm, "fit-every", 1, 1000000);
  return spec;
}

// All or nothing, each file: a full disk or an interrupt leaves the previous one as it was.
void write_fit(const po::variables_map& vm, const app::CalibrationSpec& spec,
               const app::CalibrationResult& result) {
  if (vm.count("json")) {
    const std::string path = vm["json"].as<std::string>();
    app::replace_file(path, json_text(spec, result));
    fmt::print("\nwrote {}\n", path);
  }
  if (vm.count("out")) {
    const std::string path = vm["out"].as<std::string>();
    app::replace_file(path, config::calibration_text(spec.params, result.fit.values,
                                                     app::calibration_comment(spec, result)));
    fmt::print("\nwrote {} (include it with  calibration: \"{}\"  or --set calibration={})\n", path,
               path, path);
  }
}

}  // namespace

int calibrate_command(const std::vector<std::string>& args) {
  const po::options_description options = calibrate_options();
  po::variables_map vm = parse_options_only(args, options);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  const bool floor_only = vm.count("floor-only") > 0;
  check_options(vm, floor_only);
  const app::CalibrationSpec spec = calibration_spec(vm, floor_only);
  if (floor_only) {
    const app::CalibrationResult floor = app::measurement_floor(spec);
    std::fputs(app::measurement_floor_report(spec, floor).c_str(), stdout);
    if (vm.count("json")) app::replace_file(vm["json"].as<std::string>(), json_text(spec, floor));
    return 0;
  }
  const app::CalibrationResult result = app::calibrate(
      spec, [](const std::string& line) { fmt::print(stderr, "calibrate: {}\n", line); });
  for (const auto& w : result.warnings) fmt::print(stderr, "racksim: warning: {}\n", w);
  std::fputs(app::calibration_report(spec, result).c_str(), stdout);
  write_fit(vm, spec, result);
  return 0;
}

}  // namespace racksim::cli
