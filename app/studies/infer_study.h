// `racksim infer`: decode (or prefill) steps of a scenario over a grid of batch sizes and
// context lengths, each simulated in a child process, beside the lecture's floors: the table,
// the SVG (latency and cost per token against batch, log axes) and the JSON.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/inference_run.h"
#include "app/studies/placement_report.h"

namespace racksim::app {

struct InferStudySpec {
  std::string scenario;
  std::vector<std::string> overrides;  // --set
  std::vector<int64_t> batches;
  std::vector<int64_t> contexts;  // empty: the scenario's
  std::string phase = "decode";
  int jobs = 1;
};

struct MemoryRow {
  std::string what;  // "pp=2", "ep=8"
  double weight_bytes_per_gpu = 0;
  double kv_bytes_per_gpu = 0;
};

struct InferStudy {
  std::string title;
  InferenceAlgebra algebra;
  std::vector<InferencePoint> points;  // contexts outer, batches inner
  std::vector<std::string> failures;
  std::vector<MemoryRow> memory;        // the lecture's c_mem identity for this model
  std::vector<PlacementRow> placement;  // expert maps compared (MoE models)
  int ep = 1;
  int pp = 1;
};

InferStudy run_infer_study(const InferStudySpec& spec);

// The lecture's memory identity for the model: weights and KV cache per GPU at pp = 1, 2, 4, 8
// with the batch growing with the stages (batch = micro_batch x pp), then at ep = 8, 64 with
// the same batch.
std::vector<MemoryRow> memory_identity(const InferenceAlgebra& algebra, double micro_batch);

std::string infer_table(const InferStudy& study);
void write_infer_svg(const InferStudy& study, std::ostream& os);
nlohmann::ordered_json infer_json(const InferStudy& study);

}  // namespace racksim::app
