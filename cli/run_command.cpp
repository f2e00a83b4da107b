#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "analysis/gzip_ostream.h"
#include "analysis/pipeline_svg.h"
#include "analysis/report.h"
#include "analysis/timeline.h"
#include "app/chakra_emit.h"
#include "app/output_dir.h"
#include "app/training_run.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/error.h"
#include "config/default_scenario.h"
#include "config/scenario_loader.h"

namespace racksim::cli {

namespace po = boost::program_options;

namespace {

std::optional<analysis::TimelineDetail> timeline_detail(const po::variables_map& vm) {
  const std::string detail = vm["timeline"].as<std::string>();
  if (detail == "layers") return analysis::TimelineDetail::kLayers;
  if (detail == "full") return analysis::TimelineDetail::kFull;
  if (detail == "none") return std::nullopt;
  throw InputError({"command line", 0, 0}, "--timeline",
                   fmt::format("'{}' is not layers, full or none", detail));
}

// What a run writes; a rerun into the same directory replaces them all, so no file of an earlier
// run stays beside the new ones.
const std::vector<std::string> kRunOutputs = {"report.json", "timeline.json", "timeline.json.gz",
                                              "pipeline.svg"};

void write_outputs(const app::TrainingRun& run,
                   const std::optional<analysis::TimelineDetail>& timeline, bool report_only,
                   app::OutputDir& out) {
  out.write("report.json",
            [&](std::ostream& os) { os << analysis::report_json(run.report).dump(2) << "\n"; });
  if (report_only) return;
  if (timeline) {
    out.write("timeline.json.gz", [&](std::ostream& os) {
      analysis::write_gzip(os, [&](std::ostream& gz) {
        analysis::write_timeline(run.step.graph, run.result, gz, *timeline);
      });
    });
  }
  out.write("pipeline.svg", [&](std::ostream& os) {
    analysis::write_pipeline_svg(run.step.graph, run.result, app::pipeline_svg_options(run), os);
  });
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  po::options_description options("racksim run [SCENARIO] options");
  options.add_options()("help,h", "show this help")(
      "out", po::value<std::string>(),
      "write report.json, timeline.json.gz and pipeline.svg into this directory")(
      "timeline", po::value<std::string>()->default_value("layers"),
      "the timeline's detail: layers (one slice per layer per micro-batch, at most ~100 MB), "
      "full (every operation and arrow) or none")(
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
  const config::LoadedScenario loaded =
      vm.count("scenario")
          ? config::load_scenario(vm["scenario"].as<std::string>(), overrides)
          : config::load_scenario_text(std::string(config::default_scenario_text()),
                                       std::string(config::kDefaultScenarioPath), overrides);
  const std::optional<analysis::TimelineDetail> timeline = timeline_detail(vm);
  // Check the output directory before simulating, write into it only after success.
  std::optional<app::OutputDir> out;
  if (vm.count("out")) out.emplace(vm["out"].as<std::string>());
  std::optional<app::OutputDir> chakra_dir;
  if (vm.count("emit-chakra")) chakra_dir.emplace(vm["emit-chakra"].as<std::string>());

  app::StderrProgress progress(isatty(STDERR_FILENO) != 0);
  const app::TrainingRunPlan plan = app::resolve_training_run(loaded);
  const app::TrainingRun run = app::run_training(plan, progress.feedback());
  progress.finish();
  std::fputs(analysis::report_text(run.report).c_str(), stdout);
  if (chakra_dir) app::emit_chakra(run.step.graph, plan.compute, *chakra_dir);
  if (out) write_outputs(run, timeline, vm.count("report-only") > 0, *out);
  // Everything is written: now it all moves into place.
  if (chakra_dir) {
    chakra_dir->commit();
    fmt::print("\nwrote the Chakra trace {}/{}.<rank>.et ({} ranks)\n", chakra_dir->path().string(),
               app::kChakraTraceName, run.step.graph.num_ranks());
  }
  if (out) {
    out->commit(kRunOutputs);
    const std::string dir = out->path().string();
    if (vm.count("report-only")) {
      fmt::print("\nwrote {}/report.json\n", dir);
    } else {
      fmt::print("\nwrote {0}/report.json, {0}/pipeline.svg{1}\n", dir,
                 timeline ? fmt::format(" and {}/timeline.json.gz (open it in "
                                        "https://ui.perfetto.dev)",
                                        dir)
                          : "");
    }
  }
  return 0;
}

}  // namespace racksim::cli
