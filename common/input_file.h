// Reading a file the user names: a regular file of bounded size, read whole. A device
// (/dev/zero), a FIFO or a directory is refused instead of read forever.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/error.h"

namespace racksim {

// Text inputs (scenarios, configs, CSVs, reports) are far smaller than this.
constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{256} << 20;  // 256 MiB

// The contents of `path`. Throws InputError at `where` naming `field` (and saying what the file
// was for, `what`: "the scenario") when it is missing, not a regular file, larger than
// `max_bytes`, or unreadable.
std::string read_input_file(const std::filesystem::path& path, const std::string& what,
                            const SourceLocation& where, const std::string& field,
                            std::uintmax_t max_bytes = kMaxInputFileBytes);

// The deepest nesting of objects and arrays in JSON text (strings skipped); for refusing
// documents deep enough to exhaust the stack of a recursive reader.
int json_nesting_depth(std::string_view text);

}  // namespace racksim
