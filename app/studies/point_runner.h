// Simulating many points of a study (racksim infer's batches, racksim racks' domain sizes) in
// child processes, since SimGrid runs one simulation per process: each child is a `racksim`
// command that writes one JSON file; the parent reads them back in order.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace racksim::app {

struct PointJob {
  std::vector<std::string> args;  // racksim arguments without the program; "{OUT}" is replaced
                                  // by the JSON file (or directory) the child writes
  std::string output;             // the file to read back, relative to the job's directory
};

struct PointOutcome {
  std::optional<nlohmann::json> json;  // the child's JSON, when it succeeded
  std::string error;                   // else why not (its exit status and last error line)
};

// Runs the jobs `parallel` at a time in a temporary directory (removed afterwards) and returns
// their outcomes in order.
std::vector<PointOutcome> run_points(const std::vector<PointJob>& jobs, int parallel);

}  // namespace racksim::app
