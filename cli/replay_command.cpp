#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include "analysis/kineto_report.h"
#include "analysis/pipeline_svg.h"
#include "analysis/timeline.h"
#include "analysis/trace_report.h"
#include "app/output_dir.h"
#include "app/trace_replay.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/number.h"
#include "config/scenario_loader.h"
#include "sim/engine.h"

namespace racksim::cli {

namespace po = boost::program_options;

namespace {

constexpr size_t kPrintedWarnings = 20;  // the rest are in report.json

// A number in [min, max] (the ranges of docs/guarantees.md: a rate outside them stalls SimGrid).
double number_in(const po::variables_map& vm, const char* option, double min, double max) {
  const std::string text = vm[option].as<std::string>();
  const double value = parse_finite_number(text).value_or(std::nan(""));
  if (!(value >= min && value <= max)) {
    throw InputError({"command line", 0, 0}, std::string("--") + option,
                     fmt::format("'{}' is not a number in [{:g}, {:g}]", text, min, max));
  }
  return value;
}

template <typename T>
T choice(const po::variables_map& vm, const char* option,
         std::initializer_list<std::pair<const char*, T>> values) {
  const std::string text = vm[option].as<std::string>();
  std::string names;
  for (const auto& [name, value] : values) {
    if (text == name) return value;
    names += names.empty() ? name : std::string(", ") + name;
  }
  throw InputError({"command line", 0, 0}, std::string("--") + option,
                   fmt::format("'{}' is not one of {}", text, names));
}

app::TraceReplayRequest request_from(const po::variables_map& vm) {
  app::TraceReplayRequest r;
  r.traces = vm["trace"].as<std::vector<std::string>>();
  r.trace = fmt::format("{}", fmt::join(r.traces, " "));
  r.step = vm["step"].as<int64_t>();
  r.hardware_preset = vm["hardware"].as<std::string>();
  r.nodes = int_option(vm, "nodes", 0, 1 << 20);
  if (vm.count("set")) r.overrides = vm["set"].as<std::vector<std::string>>();
  r.topology = choice<app::TraceTopology>(vm, "topology",
                                          {{"cluster", app::TraceTopology::kCluster},
                                           {"ring", app::TraceTopology::kRing},
                                           {"switch", app::TraceTopology::kSwitch}});
  r.ring_gpus = int_option(vm, "ring-gpus", 0, 1 << 16);
  r.switch_gpus = int_option(vm, "switch-gpus", 0, 1 << 16);
  r.ring_link_bytes_per_s = number_in(vm, "link-bytes-per-s", 1, 1e21);
  r.ring_link_latency_s = number_in(vm, "link-latency-s", 0, 1e3);
  r.compute = choice<chakra::ComputeSource>(
      vm, "compute",
      {{"recorded", chakra::ComputeSource::kRecorded}, {"model", chakra::ComputeSource::kModel}});
  if (vm.count("mapping")) r.mapping_file = vm["mapping"].as<std::string>();
  r.expected_ranks = int_option(vm, "ranks", -1, 1 << 20);
  r.fidelity = choice<config::Simulation::Fidelity>(vm, "fidelity",
                                                    {{"FULL", config::Simulation::FULL},
                                                     {"AGGREGATED", config::Simulation::AGGREGATED},
                                                     {"ANALYTIC", config::Simulation::ANALYTIC},
                                                     {"AUTO", config::Simulation::AUTO}});
  return r;
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (size_t i = 0; i < warnings.size() && i < kPrintedWarnings; ++i) {
    fmt::print(stderr, "racksim: warning: {}\n", warnings[i]);
  }
  if (warnings.size() > kPrintedWarnings) {
    fmt::print(stderr, "racksim: warning: and {} more (all in report.json with --out)\n",
               warnings.size() - kPrintedWarnings);
  }
}

void write_outputs(app::OutputDir& out, const app::TraceReplay& run,
                   const app::TraceReplayRequest& request, bool timeline, bool svg) {
  const auto start = std::chrono::steady_clock::now();
  out.write("report.json", [&](std::ostream& os) {
    auto json = analysis::trace_report_json(run.report);
    if (run.kineto) json["kineto"] = analysis::kineto_comparison_json(*run.kineto);
    json["sim"]["read_wall_s"] = run.read_wall_s;
    os << json.dump(2) << "\n";
  });
  std::string written = out.path().string() + "/report.json";
  if (timeline) {
    out.write("timeline.json",
              [&](std::ostream& os) { analysis::write_timeline(run.trace.graph, run.result, os); });
    written +=
        fmt::format(", {}/timeline.json (open it in https://ui.perfetto.dev)", out.path().string());
  }
  if (svg) {
    analysis::PipelineSvgOptions options;
    options.title =
        fmt::format("racksim replay {}: {:.6g} s", request.trace, run.report.step_time_s);
    options.subtitle = run.report.context.platform;
    out.write("pipeline.svg", [&](std::ostream& os) {
      analysis::write_pipeline_svg(run.trace.graph, run.result, options, os);
    });
    written += fmt::format(", {}/pipeline.svg", out.path().string());
  }
  out.commit();
  fmt::print("\nwrote {} in {:.2f} s wall\n", written,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

po::options_description replay_options() {
  po::options_description options("racksim replay TRACE options");
  options.add_options()("help,h", "show this help")(
      "trace", po::value<std::vector<std::string>>(),
      "Chakra: trace prefix (TRACE.0.et, TRACE.1.et, ...) or one file; Kineto (PyTorch "
      "profiler JSON or JSON.gz, detected by content): files, a directory or a glob, one file "
      "per rank")("step", po::value<int64_t>()->default_value(-1),
                  "Kineto: the ProfilerStep#N to replay (default: the last one)")(
      "hardware", po::value<std::string>()->default_value("dgx-h100"), "hardware preset")(
      "nodes", po::value<int>()->default_value(0), "servers (default: as many as the ranks need)")(
      "topology", po::value<std::string>()->default_value("cluster"),
      "cluster (the preset's servers and fabric) | ring (GPUs in a ring of equal links) | switch "
      "(GPUs behind one switch, one link each)")("ring-gpus", po::value<int>()->default_value(0),
                                                 "GPUs of the ring (default: one per rank)")(
      "switch-gpus", po::value<int>()->default_value(0),
      "GPUs behind the switch (default: one per rank)")(
      "link-bytes-per-s", po::value<std::string>()->default_value("50e9"),
      "ring and switch: bandwidth of each link, per direction (bytes/s)")(
      "link-latency-s", po::value<std::string>()->default_value("500e-9"),
      "ring and switch: latency of each link, one way (s)")(
      "compute", po::value<std::string>()->default_value("recorded"),
      "recorded (duration_micros) | model (the compute model from num_ops and tensor_size)")(
      "mapping", po::value<std::string>(), "file with one GPU index per line, rank 0 first")(
      "ranks", po::value<int>()->default_value(-1),
      "expected rank count (checked against the files); Kineto with one file: replay that "
      "rank's program on N ranks")(
      "fidelity",
      po::value<std::string>()->default_value(
          config::Simulation::Fidelity_Name(config::kDefaultFidelity)),
      "FULL | AGGREGATED | ANALYTIC | AUTO (the default stays within 0.5% of FULL)")(
      "out", po::value<std::string>(), "write report.json, timeline.json and pipeline.svg here")(
      "no-timeline", "with --out: leave out timeline.json (large for thousands of ranks)")(
      "report-only", "with --out: write report.json alone")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a hardware field or sim.fidelity, e.g. --set "
      "hardware.collectives.base_latency_s=0 or --set sim.fidelity=ANALYTIC");
  return options;
}

}  // namespace

int replay_command(const std::vector<std::string>& args) {
  const po::options_description options = replay_options();
  po::positional_options_description positional;
  positional.add("trace", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  po::notify(vm);
  if (!vm.count("trace")) throw InputError({"command line", 0, 0}, "TRACE", "no trace given");
  app::TraceReplayRequest request = request_from(vm);
  app::StderrProgress progress(isatty(STDERR_FILENO) != 0);
  request.feedback = progress.feedback();
  std::optional<app::OutputDir> out;
  if (vm.count("out")) out.emplace(vm["out"].as<std::string>());

  const bool timeline = !vm.count("no-timeline") && !vm.count("report-only");
  const bool svg = !vm.count("report-only");

  const app::TraceReplay run = app::replay_trace(request);
  progress.finish();
  print_warnings(run.trace.warnings);
  std::fputs(analysis::trace_report_text(run.report).c_str(), stdout);
  if (run.kineto) std::fputs(analysis::kineto_comparison_text(*run.kineto).c_str(), stdout);
  fmt::print("Trace read in {:.2f} s wall\n", run.read_wall_s);
  if (out) write_outputs(*out, run, request, timeline, svg);
  return 0;
}

}  // namespace racksim::cli
