#include "common/input_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace racksim {

namespace fs = std::filesystem;

std::string read_input_file(const fs::path& path, const std::string& what,
                            const SourceLocation& where, const std::string& field,
                            std::uintmax_t max_bytes) {
  auto fail = [&](const std::string& why) {
    throw InputError(where, field, fmt::format("cannot read {} {}: {}", what, path.string(), why));
  };
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) fail("no such file");
  if (fs::is_directory(status)) fail("it is a directory");
  if (!fs::is_regular_file(status)) fail("not a regular file (a device, FIFO or socket)");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > max_bytes) {
    fail(fmt::format("{} bytes is more than the {} MiB racksim reads", size, max_bytes >> 20));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) fail(std::strerror(errno));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) fail(std::strerror(errno));
  return text.str();
}

int json_nesting_depth(std::string_view text) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace racksim
