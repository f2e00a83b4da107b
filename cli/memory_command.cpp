// racksim memory: the memory ledger of a scenario without simulating it (seconds, not minutes),
// to find the layout that fits before asking for its step time.
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "analysis/memory_report.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "config/scenario_loader.h"
#include "workloads/training/memory_ledger.h"

namespace racksim::cli {

namespace po = boost::program_options;

int memory_command(const std::vector<std::string>& args) {
  po::options_description options("racksim memory SCENARIO options");
  options.add_options()("help,h", "show this help")(
      "json", "print the ledger as JSON (every stage, and the fullest rank in detail)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario field, e.g. --set training.indexer_chunk_tokens=0 (repeatable)")(
      "scenario", po::value<std::string>(), "scenario file (.textproto or .json)");
  const po::variables_map vm = parse_scenario_command(args, options);
  if (const auto code = help_or_missing_scenario(vm, options)) return *code;
  const auto overrides = set_overrides(vm);
  const config::LoadedScenario loaded =
      config::load_scenario(vm["scenario"].as<std::string>(), overrides);
  const std::vector<MemoryLedger> stages =
      stage_memory_ledgers(resolve_training_plan(loaded.scenario));
  const MemoryLedger& worst = fullest(stages);
  if (vm.count("json")) {
    nlohmann::ordered_json j;
    j["scenario"] = loaded.scenario.name();
    j["fits"] = worst.fits();
    j["memory"] = analysis::memory_json(worst);
    j["stages"] = nlohmann::ordered_json::array();
    for (const MemoryLedger& stage : stages) j["stages"].push_back(analysis::memory_json(stage));
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  fmt::print("racksim memory: {}\n", loaded.scenario.name());
  fmt::print("{}", analysis::memory_text(worst));
  fmt::print("{}", analysis::memory_layer_text(worst));
  fmt::print("{}", analysis::memory_stages_text(stages));
  return 0;
}

}  // namespace racksim::cli
