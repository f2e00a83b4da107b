// Where reports go. Nothing the user wrote is ever overwritten: racksim writes only into a
// directory that is new, empty, or was created by racksim (it holds a `.racksim-output`
// marker). A run's files are all or nothing: each is written into a staging directory inside
// the output directory, and commit() moves them into place together once all are written.
// Until then the previous results stay as they were; a failure or an interrupt removes the
// staging directory (and the output directory, if this run created it and it is empty).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/interrupt.h"

namespace racksim::app {

// Writing an output failed (no space left, a file size limit): the user's environment, not a
// bug. main() reports it as an error (exit 1) rather than an internal error; nothing was
// changed in the output directory.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OutputDir {
 public:
  // Checks that `path` may be written: not a file, new or empty or racksim's, and on a writable
  // filesystem (probed by creating and removing a file). Creates nothing that stays. Throws
  // InputError (field "--out") otherwise, before any work starts.
  explicit OutputDir(std::filesystem::path path);
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes `name` into the staging directory (created on the first write). Throws on a write
  // error (a full disk), naming the file.
  void write(const std::string& name, const std::function<void(std::ostream&)>& writer);

  // Moves every file written since the last commit into place, and removes the files named in
  // `replaces` that this commit did not write (what an earlier run left that this one does
  // not rewrite).
  void commit(const std::vector<std::string>& replaces = {});

 private:
  // Creates the staging directory (and `path_` when missing) and registers it for removal on
  // interrupt, as one step.
  void create_staging();
  void discard() noexcept;

  std::filesystem::path path_;
  std::filesystem::path staging_;
  std::vector<std::string> staged_;
  bool created_ = false;  // this object created path_
  std::unique_ptr<RemoveOnInterrupt> on_interrupt_;
};

// For options that name one file racksim creates (--emit-jobs): the file does not exist yet and
// its directory exists and is writable. Throws InputError naming `option` otherwise.
void check_new_file(const std::filesystem::path& path, const std::string& option);

// For options that name one file racksim writes and may replace (calibrate --out): not a
// directory, absent or accepted by `may_replace` (a file racksim wrote), in an existing writable
// directory. Throws InputError naming `option` otherwise.
void check_file_to_write(const std::filesystem::path& path, const std::string& option,
                         const std::function<bool(const std::filesystem::path&)>& may_replace);

// Writes `text` to the new file `path` through a temporary name; throws on a write error.
void write_new_file(const std::filesystem::path& path, const std::string& text);

// Writes `text` to `path` all or nothing: into a temporary file beside it, renamed over `path`
// once complete. On a write error or an interrupt the temporary is removed and an existing
// `path` stays as it was. Throws OutputError on a write error.
void replace_file(const std::filesystem::path& path, const std::string& text);

}  // namespace racksim::app
