#include "app/output_dir.h"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <unistd.h>

#include "common/error.h"

namespace racksim::app {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMarker = ".racksim-output";

InputError out_error(const fs::path& path, const std::string& why) {
  return InputError(SourceLocation{"--out", 0, 0}, "--out",
                    fmt::format("{}: {}", path.string(), why));
}

}  // namespace

OutputDir::OutputDir(fs::path path) : path_(std::move(path)) {
  std::error_code ec;
  const auto status = fs::status(path_, ec);
  if (!fs::exists(status)) return;
  if (!fs::is_directory(status)) throw out_error(path_, "exists and is not a directory");
  if (fs::exists(path_ / kMarker)) return;
  if (!fs::is_empty(path_, ec)) {
    throw out_error(path_,
                    "is a directory with files racksim did not write; choose a new or empty "
                    "directory so nothing of yours is overwritten");
  }
}

void OutputDir::write(const std::string& name,
                      const std::function<void(std::ostream&)>& writer) const {
  fs::create_directories(path_);
  if (!fs::exists(path_ / kMarker)) {
    std::ofstream(path_ / kMarker)
        << "This directory holds racksim output; racksim may replace files here.\n";
  }
  const fs::path final_path = path_ / name;
  const fs::path temp_path = path_ / fmt::format(".{}.tmp.{}", name, ::getpid());
  {
    std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", temp_path.string()));
    writer(out);
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("error while writing {}", temp_path.string()));
  }
  fs::rename(temp_path, final_path);
}

}  // namespace racksim::app
