#include "workloads/training/deepspeed_schedule.h"

#include <stdexcept>

namespace racksim {

namespace {

struct StepMicroBatch {
  int micro_batch = 0;
  bool forward = true;
};

// TrainSchedule._step_to_micro_batch: which micro-batch a step works on, and in which direction.
StepMicroBatch step_micro_batch(int step, int stage, int stages) {
  const bool even_step = step % 2 == 0;
  const bool even_stage = stage % 2 == 0;
  if (even_step && even_stage) return {step / 2 - stage / 2, true};
  if (!even_step && !even_stage) return {(step - 1) / 2 - stage / 2, true};
  if (even_step) return {step / 2 - stages + (stage + 1) / 2, false};
  return {(step - 1) / 2 - stages + 1 + stage / 2, false};
}

PipelineInstruction transfer(PipelineTransfer kind, int micro_batch) {
  return PipelineInstruction{false, {}, kind, micro_batch};
}

PipelineInstruction pass(bool forward, int micro_batch) {
  return PipelineInstruction{
      true, {forward ? PassKind::kForward : PassKind::kBackward, micro_batch, 0, false}};
}

}  // namespace

std::vector<PipelineInstruction> deepspeed_instructions(int stage, int stages, int micro_batches) {
  if (stages < 1 || stage < 0 || stage >= stages || micro_batches < 1) {
    throw std::invalid_argument(
        "DeepSpeed pipeline schedule: need 0 <= stage < stages and micro_batches >= 1");
  }
  auto valid = [&](int mb) { return mb >= 0 && mb < micro_batches; };
  const bool first = stage == 0;
  const bool last = stage == stages - 1;
  std::vector<PipelineInstruction> out;
  int previous = -1;
  for (int step = 0; step < 2 * (micro_batches + stages - 1); ++step) {
    const auto [mb, forward] = step_micro_batch(step, stage, stages);
    if (forward && !first) {
      if (valid(previous)) out.push_back(transfer(PipelineTransfer::kSendGradient, previous));
      if (valid(mb)) out.push_back(transfer(PipelineTransfer::kRecvActivation, mb));
    }
    if (!forward && !last) {
      if (valid(mb)) out.push_back(transfer(PipelineTransfer::kRecvGradient, mb));
      if (valid(previous)) out.push_back(transfer(PipelineTransfer::kSendActivation, previous));
    }
    if (valid(mb)) out.push_back(pass(forward, mb));
    previous = mb;
  }
  return out;
}

}  // namespace racksim
