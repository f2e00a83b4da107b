#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "app/studies/collective_bench.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "config/hardware_loader.h"
#include "config/scenario_loader.h"

namespace racksim::cli {

namespace po = boost::program_options;

namespace {

po::options_description collective_options() {
  po::options_description options("racksim collective options");
  options.add_options()("help,h", "show this help")(
      "hardware", po::value<std::string>()->required(), "hardware preset, e.g. dgx-h100")(
      "nodes", po::value<int>()->default_value(1), "servers")(
      "op", po::value<std::string>()->default_value("all_reduce"),
      "all_reduce | all_gather | reduce_scatter | all_to_all")(
      "ranks", po::value<int>(), "ranks, on GPUs 0..R-1 (default: every GPU)")(
      "min-bytes", po::value<std::string>()->default_value("8"),
      "smallest size (K/M/G = 2^10/2^20/2^30)")(
      "max-bytes", po::value<std::string>()->default_value("1G"), "largest size; sizes double")(
      "json", po::bool_switch(), "print JSON instead of a table")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a hardware field, e.g. --set hardware.scale_up.efficiency=0.9");
  return options;
}

// The hardware preset, its size and the --set overrides, resolved and checked, with its
// measured collective table read.
config::LoadedScenario hardware_scenario(const po::variables_map& vm) {
  config::LoadedScenario loaded = config::load_hardware_preset(
      vm["hardware"].as<std::string>(), int_option(vm, "nodes", 1, 1 << 20),
      vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{});
  loaded.measured_collectives =
      config::read_measured_table(loaded.scenario.hardware(), loaded.sources);
  return loaded;
}

app::CollectiveBenchRequest bench_request(const po::variables_map& vm,
                                          const config::LoadedScenario& loaded) {
  const config::Hardware& hardware = loaded.scenario.hardware();
  app::CollectiveBenchRequest request;
  request.hardware = hardware;
  request.measured_collectives = loaded.measured_collectives;
  request.kind = app::parse_collective_kind(vm["op"].as<std::string>());
  const int64_t gpus = int64_t{hardware.nodes()} * hardware.gpus_per_node();
  // SimGrid gives every rank an actor with a stack of its own; past this many the kernel's
  // limit on memory mappings (vm.max_map_count, 65530 by default) aborts the simulation.
  constexpr int kMaxRanks = 16384;
  const int64_t ranks = vm.count("ranks") ? vm["ranks"].as<int>() : gpus;
  if (ranks > kMaxRanks) {
    throw InputError({"command line", 0, 0}, vm.count("ranks") ? "--ranks" : "--nodes",
                     fmt::format("{} ranks exceed the supported {} (each rank is a SimGrid actor "
                                 "with its own stack); use fewer --ranks or --nodes",
                                 ranks, kMaxRanks));
  }
  request.ranks = static_cast<uint32_t>(ranks);
  request.min_bytes = app::parse_byte_size(vm["min-bytes"].as<std::string>(), "--min-bytes");
  request.max_bytes = app::parse_byte_size(vm["max-bytes"].as<std::string>(), "--max-bytes");
  if (request.max_bytes < request.min_bytes) {
    throw InputError({"command line", 0, 0}, "--max-bytes", "must be at least --min-bytes");
  }
  return request;
}

}  // namespace

int collective_command(const std::vector<std::string>& args) {
  const po::options_description options = collective_options();
  po::variables_map vm = parse_options_only(args, options);
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  po::notify(vm);

  const config::LoadedScenario loaded = hardware_scenario(vm);
  const config::Scenario& scenario = loaded.scenario;
  const app::CollectiveBenchRequest request = bench_request(vm, loaded);
  const auto rows = app::run_collective_bench(request);
  if (vm["json"].as<bool>()) {
    nlohmann::ordered_json j;
    j["hardware"] = scenario.hardware().preset();
    j["nodes"] = scenario.hardware().nodes();
    j["op"] = vm["op"].as<std::string>();
    j["ranks"] = request.ranks;
    j["rows"] = analysis::collective_table_json(rows);
    std::cout << j.dump(2) << "\n";
  } else {
    fmt::print("# racksim collective: {} on {} rank(s), {} x {}\n", vm["op"].as<std::string>(),
               request.ranks, scenario.hardware().nodes(), scenario.hardware().preset());
    std::fputs(analysis::collective_table_text(rows).c_str(), stdout);
  }
  return 0;
}

}  // namespace racksim::cli
