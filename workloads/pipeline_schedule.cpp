#include "workloads/pipeline_schedule.h"

#include <algorithm>
#include <stdexcept>

namespace racksim {

namespace {

void check(int stage, int stages, int micro_batches) {
  if (stages < 1 || stage < 0 || stage >= stages || micro_batches < 1) {
    throw std::invalid_argument(
        "pipeline schedule: need 0 <= stage < stages and micro_batches >= 1");
  }
}

}  // namespace

std::vector<PipelinePass> gpipe_order(int stage, int stages, int micro_batches) {
  check(stage, stages, micro_batches);
  std::vector<PipelinePass> order;
  order.reserve(2 * micro_batches);
  for (int mb = 0; mb < micro_batches; ++mb) order.push_back({PassKind::kForward, mb});
  for (int mb = micro_batches; mb-- > 0;) order.push_back({PassKind::kBackward, mb});
  return order;
}

std::vector<PipelinePass> one_f_one_b_order(int stage, int stages, int micro_batches) {
  check(stage, stages, micro_batches);
  const int warmup = std::min(stages - stage - 1, micro_batches);
  std::vector<PipelinePass> order;
  order.reserve(2 * micro_batches);
  int next_forward = 0;
  int next_backward = 0;
  for (int i = 0; i < warmup; ++i) order.push_back({PassKind::kForward, next_forward++});
  while (next_forward < micro_batches) {
    order.push_back({PassKind::kForward, next_forward++});
    order.push_back({PassKind::kBackward, next_backward++});
  }
  while (next_backward < micro_batches) order.push_back({PassKind::kBackward, next_backward++});
  return order;
}

}  // namespace racksim
