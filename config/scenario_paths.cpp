#include "config/scenario_paths.h"

namespace racksim::config {

std::filesystem::path path_from_scenario(const std::string& name, const std::string& field,
                                         const SourceMap& sources) {
  const std::filesystem::path path(name);
  if (path.is_absolute()) return path;
  if (sources.overridden(field) || sources.file().empty() || sources.file().front() == '<') {
    return path;
  }
  const SourceLocation where = sources.find(field);
  // A field written in a file the scenario includes (a calibration) is read from that file's
  // folder.
  const std::string& file = where.line > 0 ? where.file : sources.file();
  return std::filesystem::path(file).parent_path() / path;
}

}  // namespace racksim::config
