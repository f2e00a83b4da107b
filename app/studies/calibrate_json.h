// `racksim calibrate --json FILE`: the whole calibration report as JSON, for scripts (the
// accuracy table, a user's own plots) that would otherwise parse the text.
//
// The document holds what the text report holds, as numbers: the fitted parameters with their
// start and bounds, the error summaries (fractions, not per cent: 0.05 is 5 %), the held-out
// folds' values, Spearman's rank correlation per group, the measurement floor with its closest
// times, and one entry per measured row (its file and line, overrides, measured, fitted,
// held-out and closest step times in seconds). Its first member, "written_by", marks a file
// racksim wrote and may replace; nothing else is replaced.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "app/studies/calibrate.h"

namespace racksim::app {

inline constexpr const char* kCalibrationJsonWriter = "racksim calibrate";

// A fit's report. For --floor-only (a result from measurement_floor(): nothing fitted) the
// fit's members are absent and the rows carry the measured and closest times alone.
nlohmann::ordered_json calibration_json(const CalibrationSpec& spec,
                                        const CalibrationResult& result);

// The document as text: two-space indents, except that an array of objects (the rows, the
// folds) holds one object per line and an array of numbers or strings stays on one line, so a
// report of a thousand rows is a thousand lines that read and diff row by row. Ends in a newline.
std::string json_text_one_entry_per_line(const nlohmann::ordered_json& document);

// Whether the file holds a JSON object whose "written_by" is racksim calibrate's.
bool written_by_calibrate(const std::filesystem::path& path);

}  // namespace racksim::app
