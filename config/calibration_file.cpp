#include "config/calibration_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <google/protobuf/text_format.h>

#include "common/error.h"
#include "common/input_file.h"
#include "config/field_path.h"
#include "config/scenario_paths.h"

namespace racksim::config {

namespace fs = std::filesystem;

void merge_calibration(config::Scenario* scenario, SourceMap* sources) {
  const fs::path path = path_from_scenario(scenario->calibration(), "calibration", *sources);
  const std::string text =
      read_input_file(path, "the calibration file", sources->find("calibration"), "calibration");
  SourceMap calibration_sources;
  const config::Scenario calibration =
      parse_scenario_text(text, path.string(), &calibration_sources);
  config::Scenario only_hardware;
  *only_hardware.mutable_hardware() = calibration.hardware();
  if (calibration.SerializeAsString() != only_hardware.SerializeAsString()) {
    throw InputError({path.string(), 0, 0}, "",
                     "a calibration file may only hold a hardware { ... } section");
  }
  if (calibration.hardware().has_preset()) {
    throw InputError(calibration_sources.find("hardware.preset"), "hardware.preset",
                     "a calibration file overrides fields; it cannot choose a preset");
  }
  scenario->mutable_hardware()->MergeFrom(calibration.hardware());
  // Its fields are the calibration file's: errors name its lines, relative paths start from it.
  sources->take_section(calibration_sources, "hardware");
}

std::string calibration_text(const std::vector<std::string>& fields,
                             const std::vector<double>& values,
                             const std::vector<std::string>& comment) {
  config::Scenario s;
  for (size_t i = 0; i < fields.size(); ++i) {
    SourceMap unused;
    apply_override(fmt::format("{}={:.6g}", fields[i], values[i]), &s, &unused);
  }
  std::string body;
  google::protobuf::TextFormat::PrintToString(s, &body);
  std::string out = std::string(kCalibrationMarker) + "\n";
  for (const auto& line : comment) out += "# " + line + "\n";
  return out + body;
}

}  // namespace racksim::config
