// Calibration files: what `racksim calibrate` writes and a scenario includes with
// `calibration: "file.textproto"` (or `--set calibration=FILE`).
//
// A calibration file is protobuf text format holding only a `hardware { ... }` section, e.g.
//   # racksim calibration (fitted by racksim calibrate ...)
//   hardware { compute { gemm: 0.61 attention: 0.47 } }
// Its fields override the scenario's hardware fields and its preset's; --set overrides them.
#pragma once

#include <string>
#include <vector>

#include "config/scenario_loader.h"
#include "proto/scenario.pb.h"

namespace racksim::config {

// The first line of every calibration file racksim writes (so it may replace its own files).
inline constexpr const char* kCalibrationMarker = "# racksim calibration";

// Reads the file named by scenario->calibration() and merges its hardware section into the
// scenario, and records in `sources` that its fields come from it (so a relative path it names
// is read from its folder, and an error on one of its values names its line). Throws InputError
// naming the calibration file (or the field) when it cannot be read, does not parse, or sets
// anything besides hardware.
void merge_calibration(config::Scenario* scenario, SourceMap* sources);

// The text of a calibration file setting `fields` (dotted paths under hardware.) to `values`,
// with `comment` lines (each prefixed with "# ") after the marker.
std::string calibration_text(const std::vector<std::string>& fields,
                             const std::vector<double>& values,
                             const std::vector<std::string>& comment);

}  // namespace racksim::config
