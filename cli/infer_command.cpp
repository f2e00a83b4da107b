#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "app/child_process.h"
#include "app/inference_run.h"
#include "app/output_dir.h"
#include "app/studies/infer_study.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/error.h"
#include "config/scenario_loader.h"

namespace racksim::cli {

namespace po = boost::program_options;

std::vector<int64_t> parse_int_list(const std::string& option, const std::string& list) {
  std::vector<int64_t> values;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v <= 0) {
      throw InputError(
          {"command line", 0, 0}, option,
          fmt::format("'{}' is not a positive integer (expected a list like 1,8,64)", item));
    }
    values.push_back(v);
    start = comma + 1;
  }
  return values;
}

namespace {

InferencePhase phase_of(const std::string& phase) {
  if (phase == "decode") return InferencePhase::kDecode;
  if (phase == "prefill") return InferencePhase::kPrefill;
  throw InputError({"command line", 0, 0}, "--phase",
                   fmt::format("'{}' is not decode or prefill", phase));
}

}  // namespace

int infer_command(const std::vector<std::string>& args) {
  po::options_description options("racksim infer SCENARIO options");
  options.add_options()("help,h", "show this help")(
      "batch", po::value<std::string>()->default_value("1,8,64,512,2048"),
      "batch sizes (sequences), comma-separated")(
      "context", po::value<std::string>(),
      "context lengths (tokens), comma-separated (default: inference.context_tokens)")(
      "phase", po::value<std::string>()->default_value("decode"), "decode or prefill")(
      "out", po::value<std::string>(), "write infer.json and infer.svg into this directory")(
      "jobs", po::value<int>(), "simulations at once (default: the CPUs)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario field (repeatable)")(
      "point-out", po::value<std::string>(),
      "simulate the scenario's own batch and context once; write the point as JSON")(
      "scenario", po::value<std::string>(), "scenario file (.textproto or .json)");
  const po::variables_map vm = parse_scenario_command(args, options);
  if (const auto code = help_or_missing_scenario(vm, options)) return *code;
  const auto overrides = set_overrides(vm);
  const std::string scenario = vm["scenario"].as<std::string>();
  const InferencePhase phase = phase_of(vm["phase"].as<std::string>());
  if (vm.count("point-out")) {
    const config::LoadedScenario loaded = config::load_scenario(scenario, overrides);
    config::require_inference_section(loaded, "infer");
    const std::string path = vm["point-out"].as<std::string>();
    app::OutputDir out(std::filesystem::path(path).parent_path().string());
    const auto point = app::run_inference(app::resolve_inference_run(loaded), phase);
    out.write(std::filesystem::path(path).filename().string(),
              [&](std::ostream& os) { os << app::to_json(point).dump(2) << "\n"; });
    out.commit();
    return 0;
  }
  app::InferStudySpec spec;
  spec.scenario = scenario;
  spec.overrides = overrides;
  spec.batches = parse_int_list("--batch", vm["batch"].as<std::string>());
  if (vm.count("context"))
    spec.contexts = parse_int_list("--context", vm["context"].as<std::string>());
  spec.phase = vm["phase"].as<std::string>();
  spec.jobs = jobs_option(vm);
  std::optional<app::OutputDir> out;
  if (vm.count("out")) out.emplace(vm["out"].as<std::string>());
  const app::InferStudy study = app::run_infer_study(spec);
  std::fputs(app::infer_table(study).c_str(), stdout);
  if (out) {
    out->write("infer.json",
               [&](std::ostream& os) { os << app::infer_json(study).dump(2) << "\n"; });
    out->write("infer.svg", [&](std::ostream& os) { app::write_infer_svg(study, os); });
    out->commit();
    fmt::print("\nwrote {0}/infer.json and {0}/infer.svg\n", out->path().string());
  }
  return study.failures.empty() ? 0 : 1;
}

}  // namespace racksim::cli
