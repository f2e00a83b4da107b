// racksim memory: the memory ledger of a scenario without simulating it (seconds, not minutes),
// to find the layout that fits before asking for its step time.
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "analysis/memory_report.h"
#include "app/studies/recompute_advice.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "config/scenario_loader.h"
#include "workloads/training/memory_ledger.h"

namespace racksim::cli {

namespace po = boost::program_options;

namespace {

// The fewest layers of each chunk full recompute must take for the fullest rank to fit (null
// when it fits already or no count does).
nlohmann::ordered_json advice_json(const std::optional<BlockRecomputeAdvice>& advice) {
  if (!advice) return nullptr;
  return {{"recompute_num_layers", advice->num_layers},
          {"peak_bytes", advice->peak_bytes},
          {"capacity_bytes", advice->capacity_bytes}};
}

std::string advice_text(const std::optional<BlockRecomputeAdvice>& advice) {
  if (!advice) return "";
  return fmt::format(
      "  fits with full recompute of the first {} layers of each chunk: peak {:.2f} of {:.2f} GB "
      "(--set training.recompute=FULL --set training.recompute_method=BLOCK "
      "--set training.recompute_num_layers={}{})\n",
      advice->num_layers, advice->peak_bytes / 1e9, advice->capacity_bytes / 1e9,
      advice->num_layers,
      advice->clears_recompute_modules ? " --set training.recompute_modules=" : "");
}

}  // namespace

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
  const TrainingPlan plan = resolve_training_plan(loaded.scenario);
  const std::vector<MemoryLedger> stages = stage_memory_ledgers(plan);
  const MemoryLedger& worst = fullest(stages);
  const auto advice = least_block_recompute(loaded.scenario, plan, worst);
  if (vm.count("json")) {
    nlohmann::ordered_json j;
    j["scenario"] = loaded.scenario.name();
    j["fits"] = worst.fits();
    j["memory"] = analysis::memory_json(worst);
    j["least_block_recompute"] = advice_json(advice);
    j["stages"] = nlohmann::ordered_json::array();
    for (const MemoryLedger& stage : stages) j["stages"].push_back(analysis::memory_json(stage));
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  fmt::print("racksim memory: {}\n", loaded.scenario.name());
  fmt::print("{}", analysis::memory_text(worst));
  fmt::print("{}", advice_text(advice));
  fmt::print("{}", analysis::memory_layer_text(worst));
  fmt::print("{}", analysis::memory_stages_text(stages));
  return 0;
}

}  // namespace racksim::cli
