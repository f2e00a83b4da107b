// Errors that reach the user. Bad input is an InputError: it names the file, the line and the
// field, and the command line turns it into exit code 2. Anything else is an internal error
// (exit code 1).
#pragma once

#include <stdexcept>
#include <string>

namespace racksim {

// Where a value came from: a file and a 1-based line, or a pseudo-file such as "--set" or
// "preset llama3-70b". line == 0 means the line is not known.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, std::string field, std::string detail);

  const SourceLocation& where() const { return where_; }
  const std::string& field() const { return field_; }
  const std::string& detail() const { return detail_; }

 private:
  SourceLocation where_;
  std::string field_;
  std::string detail_;
};

// "file:line:col: field 'a.b': detail", leaving out the parts that are unknown.
std::string format_input_error(const SourceLocation& where, const std::string& field,
                               const std::string& detail);

}  // namespace racksim
