#include "app/output_dir.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/error.h"

namespace racksim::app {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMarker = ".racksim-output";
// Less free space than this is a full disk: refused before simulating rather than found after.
constexpr double kMinFreeBytes = 1 << 20;

InputError path_error(const std::string& option, const fs::path& path, const std::string& why) {
  return InputError(SourceLocation{option, 0, 0}, option,
                    fmt::format("{}: {}", path.string(), why));
}

// The closest existing directory at or above `path`; throws when a file is in the way.
fs::path existing_ancestor(const std::string& option, const fs::path& path) {
  fs::path current = fs::absolute(path);
  std::error_code ec;
  while (!fs::exists(current, ec)) current = current.parent_path();
  if (!fs::is_directory(current, ec)) {
    throw path_error(option, path, fmt::format("{} is a file, not a directory", current.string()));
  }
  return current;
}

// The directory `dir` accepts new files: permissions, a writable filesystem and free space.
void check_directory_writable(const std::string& option, const fs::path& path,
                              const fs::path& dir) {
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw path_error(option, path,
                     fmt::format("cannot write in {}: {}", dir.string(), std::strerror(errno)));
  }
  struct statvfs fs_info {};
  if (::statvfs(dir.c_str(), &fs_info) == 0 &&
      static_cast<double>(fs_info.f_bavail) * fs_info.f_frsize < kMinFreeBytes) {
    throw path_error(option, path, fmt::format("the filesystem of {} is full", dir.string()));
  }
}

// Writes `writer`'s output to `path`, flushing and checking for errors (a full disk).
void write_checked(const fs::path& path, const std::function<void(std::ostream&)>& writer) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw OutputError(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  }
  writer(out);
  out.close();  // flushes; a full disk or a file size limit shows here at the latest
  if (!out) {
    throw OutputError(fmt::format("error while writing {}: {}", path.string(),
                                  errno != 0 ? std::strerror(errno) : "write failed"));
  }
}

}  // namespace

OutputDir::OutputDir(fs::path path) : path_(std::move(path)) {
  std::error_code ec;
  const auto status = fs::status(path_, ec);
  if (!fs::exists(status)) {
    check_directory_writable("--out", path_, existing_ancestor("--out", path_));
    return;
  }
  if (!fs::is_directory(status)) throw path_error("--out", path_, "exists and is not a directory");
  if (!fs::exists(path_ / kMarker) && !fs::is_empty(path_, ec)) {
    throw path_error("--out", path_,
                     "is a directory with files racksim did not write; choose a new or empty "
                     "directory so nothing of yours is overwritten");
  }
  check_directory_writable("--out", path_, path_);
}

OutputDir::~OutputDir() {
  discard();
}

void OutputDir::discard() noexcept {
  std::error_code ignored;
  if (!staging_.empty()) fs::remove_all(staging_, ignored);
  if (created_) fs::remove_all(path_, ignored);  // nothing was committed into it
  staged_.clear();
  on_interrupt_.reset();
}

void OutputDir::create_staging() {
  if (!fs::exists(path_)) {
    fs::create_directories(path_);
    created_ = true;
  }
  staging_ = path_ / fmt::format(".racksim-staging-{}", ::getpid());
  on_interrupt_ = std::make_unique<RemoveOnInterrupt>(created_ ? path_ : staging_);
  fs::create_directories(staging_);
}

void OutputDir::write(const std::string& name, const std::function<void(std::ostream&)>& writer) {
  if (staging_.empty()) without_interrupts([&] { create_staging(); });
  const std::string previous = set_interrupt_activity("writing " + (path_ / name).string());
  write_checked(staging_ / name, writer);
  set_interrupt_activity(previous);
  staged_.push_back(name);
}

void OutputDir::commit(const std::vector<std::string>& replaces) {
  if (staging_.empty()) return;
  for (const std::string& name : replaces) {
    if (std::find(staged_.begin(), staged_.end(), name) == staged_.end()) {
      std::error_code ignored;
      fs::remove(path_ / name, ignored);
    }
  }
  if (!fs::exists(path_ / kMarker)) {
    write_checked(staging_ / kMarker, [](std::ostream& os) {
      os << "This directory holds racksim output; racksim may replace files here.\n";
    });
    staged_.push_back(kMarker);
  }
  for (const std::string& name : staged_) fs::rename(staging_ / name, path_ / name);
  fs::remove(staging_);
  staging_.clear();
  staged_.clear();
  created_ = false;
  on_interrupt_.reset();
}

void check_new_file(const fs::path& path, const std::string& option) {
  check_file_to_write(path, option, {});
}

void check_file_to_write(const fs::path& path, const std::string& option,
                         const std::function<bool(const fs::path&)>& may_replace) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw path_error(option, path, "is a directory, not a file");
  if (fs::exists(path, ec) && !(may_replace && may_replace(path))) {
    throw path_error(option, path,
                     "exists and was not written by racksim; racksim does not "
                     "overwrite files");
  }
  const fs::path parent = fs::absolute(path).parent_path();
  if (!fs::is_directory(parent, ec)) {
    throw path_error(option, path, fmt::format("{} is not a directory", parent.string()));
  }
  check_directory_writable(option, path, parent);
}

void write_new_file(const fs::path& path, const std::string& text) {
  replace_file(path, text);
}

void replace_file(const fs::path& path, const std::string& text) {
  const fs::path temp = fs::path(path.string() + fmt::format(".tmp.{}", ::getpid()));
  const RemoveOnInterrupt on_interrupt(temp);
  try {
    write_checked(temp, [&](std::ostream& os) { os << text; });
    fs::rename(temp, path);
  } catch (...) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw;
  }
}

}  // namespace racksim::app
