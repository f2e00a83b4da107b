// A simulation's result as bytes: a child process that ran the simulation (SimGrid runs one per
// process) hands its SimResult back to the parent, which analyses it against the event graph it
// kept. The format is private to one racksim binary (parent and child are the same program):
// a magic word, then the fields in declaration order, vectors as a count and their elements.
#pragma once

#include <iosfwd>

#include "sim/engine.h"

namespace racksim::sim {

void write_sim_result(const SimResult& result, std::ostream& out);

// Throws std::runtime_error when the bytes are not a complete result of this format.
SimResult read_sim_result(std::istream& in);

}  // namespace racksim::sim
