#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "app/topology_report.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "topologies/topology_graph.h"

namespace racksim::cli {

namespace po = boost::program_options;

int topo_command(const std::vector<std::string>& args) {
  po::options_description options("racksim topo options");
  options.add_options()("help,h", "show this help")("cluster", po::value<std::string>()->required(),
                                                    "scenario file or hardware preset")(
      "nodes", po::value<int>()->default_value(0), "servers (0: as the scenario or preset says)")(
      "dot", po::value<std::string>(), "write the graph as Graphviz DOT to this file")(
      "json", po::bool_switch(), "print JSON instead of text")(
      "build-platform", po::bool_switch(),
      "also build the SimGrid platform and print wall time and peak memory")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a hardware field, e.g. --set hardware.scale_out.tiers=3");
  po::positional_options_description positional;
  positional.add("cluster", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << "usage: racksim topo SCENARIO|PRESET [--nodes N] [--dot FILE] [--json]\n"
              << options << "\n";
    return 0;
  }
  po::notify(vm);

  const std::string cluster = vm["cluster"].as<std::string>();
  const auto overrides =
      vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const config::Hardware hardware =
      app::load_topology_hardware(cluster, int_option(vm, "nodes", 0, 1 << 20), overrides);
  if (vm["build-platform"].as<bool>()) {
    std::fputs(app::platform_build_text(app::measure_platform_build(hardware)).c_str(), stdout);
    return 0;
  }
  const topo::Topology topology = topo::build_cluster(hardware);
  const topo::TopologySummary summary = topo::summarize(topology, hardware);
  if (vm.count("dot")) app::write_topology_dot(hardware, vm["dot"].as<std::string>());
  if (vm["json"].as<bool>()) {
    std::cout << app::topology_json(summary).dump(2) << "\n";
  } else {
    const std::string title =
        fmt::format("{}, {} node{}", hardware.has_preset() ? hardware.preset() : cluster,
                    hardware.nodes(), hardware.nodes() == 1 ? "" : "s");
    std::fputs(app::topology_text(title, summary).c_str(), stdout);
  }
  return 0;
}

}  // namespace racksim::cli
