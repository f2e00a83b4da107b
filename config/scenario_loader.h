// Reading a scenario: the file (textproto or JSON), the presets it names, the `--set`
// overrides, the defaults, and the checks that make it a scenario we can simulate.
//
// Every field value remembers where it came from (SourceMap), so that an error found late
// (an impossible layout) still names the file, the line and the field.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "proto/scenario.pb.h"
#include "topologies/measured_collectives.h"

namespace racksim::config {

// The fidelity a scenario runs when it sets no sim.fidelity (docs/speed.md): AUTO, held within
// sim::kDefaultErrorBudget of FULL's step time (tests/cli/cli_default_fidelity_test.cpp). FULL
// stays available for validation.
inline constexpr config::Simulation::Fidelity kDefaultFidelity = config::Simulation::AUTO;

// What marks a field's location as its preset's or framework's, not the scenario's
// (config/scenario_presets.cpp, note_preset_fields).
inline constexpr std::string_view kInheritedMark = " (inherited; set ";

// Field path ("layout.tp", "hardware.scale_out.nic_bits_per_s") -> where its value was written.
class SourceMap {
 public:
  void set(const std::string& path, SourceLocation where) { locations_[path] = std::move(where); }
  // The location of `path`, else of its closest ancestor ("layout" for "layout.tp"), else the
  // file itself with line 0.
  SourceLocation find(const std::string& path) const;
  // Whether `path` itself was written by a --set override (not the file, a preset or a default).
  bool overridden(const std::string& path) const;
  // Whether `path` came from a preset or framework the scenario names (note_preset_fields).
  bool inherited(const std::string& path) const;
  // Every path with a location that starts with `prefix` ("hardware.compute."), in order.
  std::vector<std::string> paths_under(const std::string& prefix) const;
  const std::string& file() const { return file_; }
  void set_file(std::string file) { file_ = std::move(file); }
  // Takes every location `other` holds under `section.` (an included file's fields), replacing
  // what this map said of them.
  void take_section(const SourceMap& other, const std::string& section);

 private:
  std::string file_;
  std::map<std::string, SourceLocation> locations_;
};

struct LoadedScenario {
  config::Scenario scenario;  // fully resolved: defaults <- presets <- file <- --set
  SourceMap sources;
  // hardware.collectives.measured_table, read and checked once here (empty when none is named):
  // the engine takes this, and nothing after the loader opens the file again.
  topo::MeasuredCollectives measured_collectives;
};

// Parses `text` as a scenario. `path` names the file in errors; the format is JSON when the
// path ends in ".json" (or the text starts with '{'), protobuf text format otherwise.
// Throws InputError on syntax errors, unknown fields and wrong types.
config::Scenario parse_scenario_text(const std::string& text, const std::string& path,
                                     SourceMap* sources);

// Applies one "path=value" override (e.g. "layout.pp=4", "training.recompute=FULL",
// "model.preset=llama3-8b") to `scenario` and records it in `sources` as coming from
// "--set path=value". Throws InputError naming the override on an unknown path or a bad value.
void apply_override(const std::string& assignment, config::Scenario* scenario, SourceMap* sources);

// Reads the file, applies the overrides, merges presets and defaults, and validates.
// Throws InputError (exit code 2) for anything wrong with the input.
LoadedScenario load_scenario(const std::string& path, const std::vector<std::string>& overrides);

// The same, from text already in memory (used for the built-in default scenario).
LoadedScenario load_scenario_text(const std::string& text, const std::string& path,
                                  const std::vector<std::string>& overrides);

// Fills unset fields from the model and hardware presets and from the built-in defaults.
// Throws InputError on an unknown preset name.
void resolve_presets(config::Scenario* scenario, const SourceMap& sources);

// Checks a resolved hardware section (positive sizes and rates, efficiencies in [0.01, 1],
// non-negative latencies). Throws InputError naming the offending field.
void validate_hardware(const config::Hardware& hardware, const SourceMap& sources);

// Reads hardware.collectives.measured_table (empty when the hardware names none). Throws
// InputError naming the table's file, line and column for a bad row, or the field's line for a
// file that cannot be read. The loader calls it once, after the checks above.
topo::MeasuredCollectives read_measured_table(const config::Hardware& hardware,
                                              const SourceMap& sources);

// Checks a resolved scenario: required fields present, values in range, and the layout
// possible (tp x pp x cp x dp == GPUs, heads divisible by tp, layers divisible by pp, global
// batch divisible by micro-batch x dp, ...). Throws InputError naming the offending field.
void validate_scenario(const config::Scenario& scenario, const SourceMap& sources);

// For the commands that simulate inference (infer, racks): the scenario has an inference
// section. Throws InputError naming "inference" otherwise.
void require_inference_section(const LoadedScenario& loaded, const std::string& command);

}  // namespace racksim::config
