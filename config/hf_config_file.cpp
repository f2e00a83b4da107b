#include "config/hf_config_file.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/input_file.h"
#include "config/hf_config.h"
#include "config/json_locations.h"
#include "config/scenario_paths.h"

namespace racksim::config {
namespace {

constexpr const char* kField = "model.hf_config";

// Where a top-level key of the config is written (the file itself when not found).
SourceLocation key_location(const std::string& text, const std::string& file,
                            const std::string& key) {
  if (!key.empty()) {
    for (const JsonKey& k : scan_json_keys(text, nullptr).keys) {
      if (k.path == key) return {file, k.line, k.column};
    }
  }
  return {file, 0, 0};
}

std::string read_text(const std::filesystem::path& path, const SourceMap& sources) {
  return read_input_file(path, "the Hugging Face config", sources.find(kField), kField);
}

}  // namespace

config::Model read_hf_config(const config::Scenario& scenario, const SourceMap& sources) {
  const std::filesystem::path path =
      path_from_scenario(scenario.model().hf_config(), kField, sources);
  const std::string file = path.string();
  const std::string text = read_text(path, sources);
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError({file, line_of_offset(text, e.byte > 0 ? e.byte - 1 : 0), 0}, kField,
                     fmt::format("not valid JSON: {}", e.what()));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
    throw InputError({file, 0, 0}, kField, fmt::format("not valid JSON: {}", e.what()));
  }
  try {
    return model_from_hf_config(config);
  } catch (const HfConfigError& e) {
    throw InputError(key_location(text, file, e.key()), kField, e.what());
  }
}

}  // namespace racksim::config
