// How a replayed Kineto trace compares with the trace itself: the step time recorded (the
// ProfilerStep annotation, or its GPU work if that ends later) against the simulated one, and
// per GPU stream the busy time recorded against simulated, for the first rank running each
// file's program. Also what the reader made of the trace (kernels, collectives, copies,
// dependencies it inferred). Printed after the replay report and written under "kineto" in
// report.json (docs/replay-kineto.md).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine.h"
#include "traces/kineto_reader.h"

namespace racksim::analysis {

struct StreamComparison {
  std::string stream;
  double recorded_s = 0;
  double simulated_s = 0;
  uint64_t ops = 0;
};

struct RankComparison {
  std::string file;
  RankId rank = 0;  // the replayed rank compared
  double recorded_step_s = 0;
  double simulated_step_s = 0;  // the rank's last operation's end
  std::vector<StreamComparison> streams;
  kineto::ProgramCounts counts;
};

struct KinetoComparison {
  std::string step;
  bool replicated = false;
  int source_world_size = -1;
  std::string gpu;
  std::vector<RankComparison> ranks;  // one per file
  kineto::GemmTiming gemm_timing;     // --compute model: GEMM kernels modelled vs recorded
};

// `graph`: the replayed graph (the trace's, which the replay may have taken over).
KinetoComparison compare_kineto(const kineto::KinetoTrace& trace, const EventGraph& graph,
                                const sim::SimResult& result);

nlohmann::ordered_json kineto_comparison_json(const KinetoComparison& c);
std::string kineto_comparison_text(const KinetoComparison& c);

}  // namespace racksim::analysis
