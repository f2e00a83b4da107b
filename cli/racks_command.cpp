#include "cli/commands.h"
#include "common/error.h"

namespace racksim::cli {

int racks_command(const std::vector<std::string>&) {
  throw InputError({"command line", 0, 0}, "racks", "not implemented yet");
}

}  // namespace racksim::cli
