#include "common/error.h"

#include <fmt/format.h>

namespace racksim {

std::string format_input_error(const SourceLocation& where, const std::string& field,
                               const std::string& detail) {
  std::string out = where.file.empty() ? std::string("<input>") : where.file;
  if (where.line > 0) out += fmt::format(":{}", where.line);
  if (where.line > 0 && where.column > 0) out += fmt::format(":{}", where.column);
  out += ": ";
  if (!field.empty()) out += fmt::format("field '{}': ", field);
  out += detail;
  return out;
}

InputError::InputError(SourceLocation where, std::string field, std::string detail)
    : std::runtime_error(format_input_error(where, field, detail)),
      where_(std::move(where)),
      field_(std::move(field)),
      detail_(std::move(detail)) {}

}  // namespace racksim
