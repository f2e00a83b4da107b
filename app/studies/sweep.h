// `racksim sweep`: the Cartesian product of scenario field values, each point checked in
// process (the scenario's validation, then the memory ledger) and the rest simulated in
// parallel child processes (`racksim run ... --out DIR/points/<id>`, one simulation per
// process), or written out as one command per point for GNU parallel or a Slurm job array.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/sweep_table.h"

namespace racksim::app {

struct SweepAxis {
  std::string field;                // "layout.tp"
  std::vector<std::string> values;  // "1", "2", "4"
};

struct SweepSpec {
  std::string scenario;            // file, or empty for the built-in default
  std::vector<std::string> fixed;  // --set path=value with one value
  std::vector<SweepAxis> axes;     // --set path=v1,v2,... (two or more values)
  bool keep_timelines = false;  // each point writes its timeline and chart, not report.json alone
};

// Splits the --set arguments into swept axes and fixed overrides. Throws InputError for an
// argument that is not path=value or has an empty value in its list.
SweepSpec parse_sweep(const std::string& scenario, const std::vector<std::string>& sets);

std::vector<std::string> axis_fields(const SweepSpec& spec);

struct SweepRun {
  std::vector<analysis::SweepPoint> points;         // in grid order (the last axis fastest)
  std::vector<std::vector<std::string>> overrides;  // per point: fixed, then the point's values
};

// Every point of the grid, each either invalid (with the validation message), not fitting in
// memory (with the culprit), or pending (to simulate).
SweepRun plan_sweep(const SweepSpec& spec);

// Simulates the pending points in child processes, `jobs` at a time, each writing its report
// into out_dir/points/<id>; `progress(done, total)` is called as points finish.
void simulate_sweep(const SweepSpec& spec, SweepRun* run, const std::filesystem::path& out_dir,
                    int jobs, const std::function<void(size_t, size_t)>& progress);

// Reads out_dir/points/<id>/report.json of the pending points (after the emitted jobs ran);
// points without a report are marked failed.
void collect_sweep(SweepRun* run, const std::filesystem::path& out_dir);

// One shell command per pending point (`racksim run ... --out out_dir/points/<id>`).
std::string sweep_job_lines(const SweepSpec& spec, const SweepRun& run,
                            const std::filesystem::path& out_dir);

// The first point's reason when every point is invalid (nothing to simulate), else nothing.
std::optional<std::string> all_points_invalid(const SweepRun& run);

}  // namespace racksim::app
