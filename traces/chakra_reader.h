// Reading a recorded Chakra trace into racksim's event graph.
//
// A trace is one file per rank, `<prefix>.<rank>.et` (protobuf, possibly gzipped) or
// `<prefix>.<rank>.json` (Chakra's JSON variant); a path naming one existing file is a
// one-rank trace. The rank count is the number of files found (ranks 0..N-1, none missing),
// and must equal `expected_ranks` when that is given.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "traces/chakra_build.h"

namespace racksim::chakra {

struct ReadOptions {
  ComputeSource compute = ComputeSource::kRecorded;
  int expected_ranks = -1;  // -1: whatever the files say
};

// The rank files of a trace prefix, rank 0 first. Throws InputError when there are none,
// when a rank is missing, or when their number is not `expected_ranks`.
std::vector<std::string> find_rank_files(const std::string& prefix, int expected_ranks = -1);

// Reads and checks every rank's file and builds the event graph. Throws InputError (exit
// code 2) naming the file, and the node where there is one, for anything that cannot be
// replayed; what can be replayed with a caveat is in ChakraTrace::warnings.
ChakraTrace read_chakra_trace(const std::string& prefix, const ReadOptions& options = {});

// One rank from bytes in memory (an .et stream, gzipped or not): the fuzz target's entry.
ChakraTrace read_chakra_bytes(std::string_view bytes, const ReadOptions& options = {});

}  // namespace racksim::chakra
