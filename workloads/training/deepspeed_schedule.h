// DeepSpeed's pipeline schedule as one stage's list of instructions: the passes of 1F1B, with
// every activation and gradient transfer issued on its own at the place DeepSpeed's engine
// issues it.
//
// DeepSpeed's TrainSchedule (github.com/deepspeedai/DeepSpeed, Apache-2.0,
// deepspeed/runtime/pipe/schedule.py), which Megatron-DeepSpeed's pipelines run on, walks
// 2 (m + p - 1) steps. A stage's steps alternate between forward and backward steps by the parity
// of step and stage; a step whose micro-batch is out of range runs no pass but still makes its
// transfers. A forward step sends the previous step's input gradient (stages after the first),
// then receives its own activation; a backward step receives its own output gradient (stages
// before the last), then sends the previous step's activation. So a forward's activation leaves
// one step late, and no transfer is paired with another as Megatron's 1F1B pairs them.
// Each transfer blocks both sides: it runs once the sender and its receiver have both reached it.
#pragma once

#include <vector>

#include "workloads/training/pipeline_schedule.h"

namespace racksim {

enum class PipelineTransfer {
  kRecvActivation,  // from the stage before
  kSendActivation,  // to the stage after
  kRecvGradient,    // from the stage after
  kSendGradient,    // to the stage before
};

// One instruction of a stage: a pass, or a transfer of one micro-batch's activation or gradient.
struct PipelineInstruction {
  bool is_pass = true;
  PipelinePass pass;  // is_pass
  PipelineTransfer transfer = PipelineTransfer::kRecvActivation;
  int micro_batch = 0;  // a transfer's micro-batch

  bool operator==(const PipelineInstruction&) const = default;
};

// Stage `stage` of `stages` over `micro_batches`: its passes are one_f_one_b_order's, in the same
// order, with the transfers between them.
std::vector<PipelineInstruction> deepspeed_instructions(int stage, int stages, int micro_batches);

}  // namespace racksim
