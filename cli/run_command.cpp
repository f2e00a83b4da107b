#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "analysis/pipeline_svg.h"
#include "analysis/report.h"
#include "analysis/timeline.h"
#include "app/chakra_emit.h"
#include "app/default_scenario.h"
#include "app/output_dir.h"
#include "app/scenario_loader.h"
#include "app/training_run.h"
#include "cli/command_line.h"
#include "cli/commands.h"

namespace racksim::cli {

namespace po = boost::program_options;

int run_command(const std::vector<std::string>& args) {
  po::options_description options("racksim run [SCENARIO] options");
  options.add_options()("help,h", "show this help")(
      "out", po::value<std::string>(),
      "write report.json, timeline.json and pipeline.svg into this directory")(
      "report-only", "with --out, write report.json alone (sweeps and calibrations)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario field, e.g. --set layout.pp=4 (repeatable)")(
      "emit-chakra", po::value<std::string>(),
      "also write the step as a Chakra trace: DIR/trace.<rank>.et (racksim replay DIR/trace)")(
      "scenario", po::value<std::string>(), "scenario file (.textproto or .json)");
  const po::variables_map vm = parse_scenario_command(args, options);
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  const auto overrides = set_overrides(vm);
  const app::LoadedScenario loaded =
      vm.count("scenario")
          ? app::load_scenario(vm["scenario"].as<std::string>(), overrides)
          : app::load_scenario_text(std::string(app::default_scenario_text()),
                                    std::string(app::kDefaultScenarioPath), overrides);
  // Check the output directory before simulating, write into it only after success.
  std::optional<app::OutputDir> out;
  if (vm.count("out")) out.emplace(vm["out"].as<std::string>());
  std::optional<app::OutputDir> chakra_dir;
  if (vm.count("emit-chakra")) chakra_dir.emplace(vm["emit-chakra"].as<std::string>());

  const app::TrainingRun run = app::run_training(loaded.scenario);
  std::fputs(analysis::report_text(run.report).c_str(), stdout);
  if (chakra_dir) {
    app::emit_chakra(run.step.graph, loaded.scenario.hardware(), *chakra_dir);
    fmt::print("\nwrote the Chakra trace {}/{}.<rank>.et ({} ranks)\n", chakra_dir->path().string(),
               app::kChakraTraceName, run.step.graph.num_ranks());
  }
  if (out) {
    out->write("report.json",
               [&](std::ostream& os) { os << analysis::report_json(run.report).dump(2) << "\n"; });
    if (vm.count("report-only")) return 0;
    out->write("timeline.json",
               [&](std::ostream& os) { analysis::write_timeline(run.step.graph, run.result, os); });
    out->write("pipeline.svg", [&](std::ostream& os) {
      analysis::write_pipeline_svg(run.step.graph, run.result, app::pipeline_svg_options(run), os);
    });
    fmt::print(
        "\nwrote {0}/report.json, {0}/timeline.json (open it in https://ui.perfetto.dev) and "
        "{0}/pipeline.svg\n",
        out->path().string());
  }
  return 0;
}

}  // namespace racksim::cli
