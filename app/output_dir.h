// Where reports go. Nothing the user wrote is ever overwritten: racksim writes only into a
// directory that is new, empty, or was created by racksim (it holds a `.racksim-output`
// marker), and each file is written to a temporary name and renamed into place, so a failed
// run leaves no half-written report behind.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>

namespace racksim::app {

class OutputDir {
 public:
  // Checks that `path` may be written; creates nothing yet. Throws InputError (field "--out")
  // when it is a file or a directory with someone else's files in it.
  explicit OutputDir(std::filesystem::path path);

  const std::filesystem::path& path() const { return path_; }

  // Creates the directory (and its marker) if needed, then writes `name` atomically.
  void write(const std::string& name, const std::function<void(std::ostream&)>& writer) const;

 private:
  std::filesystem::path path_;
};

}  // namespace racksim::app
