// A rank's pipeline passes in DeepSpeed's TrainSchedule (training.pipeline_exchange DEEPSPEED).
#include <stdexcept>

#include "workloads/training/rank_step.h"

namespace racksim {

namespace {

// The tag of a transfer's "ready" message, which travels the other way: above every data tag
// (a data tag stays under 2^29 for the micro-batch counts a step holds) and under the ring
// exchanges' tags.
uint32_t ready_tag(uint32_t data_tag) {
  return 0x20000000u | data_tag;
}

}  // namespace

void RankStep::write_deepspeed_passes(const PassOrder& order) {
  const auto instructions =
      deepspeed_instructions(coords_.pp, s_.plan.layout.pp(), s_.plan.micro_batches);
  size_t index = 0;
  for (const PipelineInstruction& instruction : instructions) {
    if (!instruction.is_pass) {
      write_deepspeed_transfer(instruction);
      continue;
    }
    if (index >= order.size() || !(order[index] == instruction.pass)) {
      throw std::logic_error("training step: DeepSpeed's passes differ from the schedule's");
    }
    write_pass(main_, s_.main, instruction.pass, static_cast<int>(index++),
               /*inputs_written=*/true);
  }
  if (index != order.size()) {
    throw std::logic_error("training step: DeepSpeed's schedule left passes out");
  }
}

void RankStep::write_deepspeed_transfer(const PipelineInstruction& instruction) {
  const int mb = instruction.micro_batch;
  const auto& route = s_.plan.map.route(mb, s_.plan.micro_batches);
  const int pos = s_.plan.map.position(mb, s_.plan.micro_batches, {coords_.pp, 0});
  const PipelineHop hop = pipeline_hop(instruction.transfer, route, pos, mb);
  const OpTag forward{Phase::kForward, mb, -1};
  const OpTag backward{Phase::kBackward, mb, -1};
  switch (instruction.transfer) {
    case PipelineTransfer::kRecvActivation:
      receive_when_posted(hop, "recv.activation", forward);
      break;
    case PipelineTransfer::kSendActivation:
      send_when_posted(hop, "send.activation", forward);
      break;
    case PipelineTransfer::kRecvGradient:
      receive_when_posted(hop, "recv.gradient", backward);
      break;
    case PipelineTransfer::kSendGradient:
      send_when_posted(hop, "send.gradient", backward);
      break;
  }
}

void RankStep::receive_when_posted(const PipelineHop& hop, const char* name, const OpTag& op_tag) {
  writer_.send(main_, s_.main.pp, "pp.ready", hop.peer, ready_tag(hop.tag), 0, CommDim::kPp,
               /*blocking=*/true, op_tag);
  writer_.recv(main_, s_.main.pp, name, hop.peer, hop.tag, hop.bytes, CommDim::kPp, op_tag);
  write_handoff(main_, s_.main.compute, hop.bytes, op_tag);
}

void RankStep::send_when_posted(const PipelineHop& hop, const char* name, const OpTag& op_tag) {
  writer_.recv(main_, s_.main.pp, "pp.ready", hop.peer, ready_tag(hop.tag), 0, CommDim::kPp,
               op_tag);
  writer_.send(main_, s_.main.pp, name, hop.peer, hop.tag, hop.bytes, CommDim::kPp,
               /*blocking=*/true, op_tag);
  write_handoff(main_, s_.main.compute, hop.bytes, op_tag);
}

}  // namespace racksim
