#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "app/child_process.h"
#include "app/output_dir.h"
#include "app/studies/racks_study.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/error.h"
#include "proto/scenario.pb.h"

namespace racksim::cli {

namespace po = boost::program_options;

namespace {

// A fidelity name as sim.fidelity spells it; bad input stops before any simulation.
std::string fidelity_option(const std::string& option, const std::string& value) {
  config::Simulation::Fidelity fidelity;
  if (!config::Simulation::Fidelity_Parse(value, &fidelity) ||
      fidelity == config::Simulation::FIDELITY_UNSPECIFIED) {
    throw InputError({"command line", 0, 0}, option,
                     fmt::format("'{}' is not a fidelity (expected one of FULL, AGGREGATED, "
                                 "ANALYTIC, AUTO)",
                                 value));
  }
  return value;
}

}  // namespace

int racks_command(const std::vector<std::string>& args) {
  po::options_description options("racksim racks SCENARIO options");
  options.add_options()("help,h", "show this help")(
      "scale-up", po::value<std::string>()->default_value("8,72,144,576"),
      "GPUs per scale-up domain, comma-separated")("no-training", "simulate the decode step only")(
      "train-fidelity", po::value<std::string>()->default_value("AGGREGATED"),
      "the training step's sim.fidelity: AGGREGATED or ANALYTIC (faster)")(
      "decode-fidelity", po::value<std::string>(),
      "the decode step's sim.fidelity (default: the scenario's); ANALYTIC for large EP groups")(
      "out", po::value<std::string>(), "write racks.json and racks.svg into this directory")(
      "jobs", po::value<int>(), "simulations at once (default: the CPUs)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario field (repeatable)")("scenario", po::value<std::string>(),
                                                "scenario file (.textproto or .json)");
  const po::variables_map vm = parse_scenario_command(args, options);
  if (const auto code = help_or_missing_scenario(vm, options)) return *code;
  app::RacksStudySpec spec;
  spec.scenario = vm["scenario"].as<std::string>();
  spec.overrides = set_overrides(vm);
  for (int64_t d : parse_int_list("--scale-up", vm["scale-up"].as<std::string>())) {
    spec.domain_sizes.push_back(static_cast<int>(d));
  }
  spec.training = !vm.count("no-training");
  spec.training_fidelity =
      fidelity_option("--train-fidelity", vm["train-fidelity"].as<std::string>());
  if (vm.count("decode-fidelity")) {
    spec.decode_fidelity =
        fidelity_option("--decode-fidelity", vm["decode-fidelity"].as<std::string>());
  }
  spec.jobs = jobs_option(vm);
  std::optional<app::OutputDir> out;
  if (vm.count("out")) out.emplace(vm["out"].as<std::string>());
  const app::RacksStudy study = app::run_racks_study(spec);
  std::fputs(app::racks_table(study).c_str(), stdout);
  bool failed = false;
  for (const auto& r : study.rows) failed = failed || !r.failures.empty();
  if (out) {
    out->write("racks.json",
               [&](std::ostream& os) { os << app::racks_json(study).dump(2) << "\n"; });
    out->write("racks.svg", [&](std::ostream& os) { app::write_racks_svg(study, os); });
    out->commit();
    fmt::print("\nwrote {0}/racks.json and {0}/racks.svg\n", out->path().string());
  }
  return failed ? 1 : 0;
}

}  // namespace racksim::cli
