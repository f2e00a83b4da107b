// Reading PyTorch profiler (Kineto) traces into racksim's event graph: one JSON or JSON.gz file
// per rank (detected by content), given as files, directories or globs. distributedInfo gives
// each file's rank and the world size; one profiling step (ProfilerStep#N) is replayed, the
// same on every rank. The graph carries what traces/kineto_program.h describes; the
// collectives are matched across ranks by their order per process group, and checked.
//
// A single rank's trace can stand for a job whose ranks all run the same program (data
// parallel, FSDP): `ranks` > 1 with one file replicates it (KinetoTrace::replicated).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "traces/chakra_build.h"
#include "traces/kineto_gemm.h"
#include "traces/kineto_program.h"

namespace racksim::kineto {

struct KinetoOptions {
  int64_t step = -1;  // ProfilerStep number; -1: the last one with a duration
  int ranks = -1;     // -1: the files' ranks; with one file, N > 1 replicates it on N ranks
  // --compute model: times GEMM kernels from their shapes (traces/kineto_gemm.h); empty:
  // every kernel keeps its recorded duration.
  GemmTimer gemm_seconds = {};
};

struct KinetoTrace {
  chakra::ChakraTrace trace;          // graph, per-rank files, process groups, warnings
  std::vector<RankProgram> programs;  // one per file read
  std::vector<uint32_t> program_of_rank;
  bool replicated = false;     // one file's program on every rank
  int source_world_size = -1;  // distributedInfo.world_size of the files
  std::string gpu;             // deviceProperties name of the first file
  std::string step_name;
  GemmTiming gemm_timing;  // over the files' programs (each file once)
};

// Whether the command-line trace arguments are Kineto traces: a directory, a glob, several
// files, or one file whose content looks like Kineto JSON.
bool is_kineto_input(const std::vector<std::string>& args);

// The files the arguments name: files as given, directories' Kineto files (by name order),
// globs expanded. Throws InputError when an argument names nothing.
std::vector<std::string> expand_trace_paths(const std::vector<std::string>& args);

// Reads, checks and builds the replay. Throws InputError (exit 2) naming the file, the event
// and the field for what cannot be replayed.
KinetoTrace read_kineto_trace(const std::vector<std::string>& args, const KinetoOptions& options);

// One rank from bytes in memory: the fuzz target's entry.
KinetoTrace read_kineto_bytes(std::string_view bytes, const KinetoOptions& options = {});

}  // namespace racksim::kineto
