// The result of a layout sweep as a person and a spreadsheet read it: a ranked table and a CSV.
// Points that could not run are listed with the reason (invalid layout: the validation
// message; does not fit: the memory ledger's culprit; failed: the simulation's error).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace racksim::analysis {

enum class PointStatus { kSimulated, kInvalid, kDoesNotFit, kFailed, kPending };

std::string_view to_string(PointStatus status);

struct SweepPoint {
  std::string id;                   // "p003": its place in the grid, and its output folder
  std::vector<std::string> values;  // one per swept field
  PointStatus status = PointStatus::kPending;
  std::string reason;
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double ms_per_1k_tokens = 0;
  double mfu_model = 0;
  double mfu_hardware = 0;
  double peak_memory_bytes = 0;
  double capacity_bytes = 0;
  double bubble_s = 0;
  double exposed_comm_s = 0;  // all dimensions of the critical rank
};

// Fills the figures of a simulated point from its report.json.
void read_report_figures(const nlohmann::json& report, SweepPoint* point);

// Simulated points best first (most tokens/s per GPU: the same order as the step time when the
// GPUs and the batch are fixed, and the fair one when they are swept), then the others in grid
// order.
std::vector<size_t> ranked_order(const std::vector<SweepPoint>& points);

std::string sweep_table(const std::vector<std::string>& fields,
                        const std::vector<SweepPoint>& points);
std::string sweep_csv(const std::vector<std::string>& fields,
                      const std::vector<SweepPoint>& points);

}  // namespace racksim::analysis
