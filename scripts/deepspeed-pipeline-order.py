#!/usr/bin/env python3
"""How much DeepSpeed's pipeline schedule costs beyond Megatron's 1F1B, on in-order GPU streams.

Megatron's 1F1B sends a stage's activation right after its forward and takes the next gradient
in the same exchange. DeepSpeed's pipeline engine (github.com/deepspeedai/DeepSpeed, Apache-2.0,
deepspeed/runtime/pipe/schedule.py, TrainSchedule) issues them otherwise: it alternates forward
and backward steps by the parity of step and stage, defers a forward's activation send to the
stage's next backward step, and issues every send and receive on its own. Its history holds two
orders of each step's two exchanges (send before receive and the reverse); both are here.

racksim simulates DeepSpeed's order itself (`training.pipeline_exchange: DEEPSPEED`, which the
`megatron-deepspeed` framework sets; workloads/training/deepspeed_schedule.h); this script is the
independent play of the same rule, whose two-stage closed form racksim's test pins. It times
both schedules on stages whose forward takes F and backward B, each transfer t (a send and its
receive end together, t after the later of the two is issued), and prints the
steps for the rows of vTrain's cluster that the model gives too fast (docs/validation.md,
"6 December, morning"). It says how much of those rows' misses the schedule could hold.

usage: scripts/deepspeed-pipeline-order.py [--self-test]

--self-test checks the algebra instead (ctest runs it): with free transfers both schedules take
(m + p - 1)(F + B) for m micro-batches over p stages, DeepSpeed's two orders agree, a transfer
costs DeepSpeed's schedule no less than Megatron's, and on two stages DeepSpeed's step is
(m + 1)(F + B) + 2 m t: every transfer on the critical path, one after another
(tests/analysis/analysis_pipeline_test.cpp, DeepSpeedExchange, checks racksim against it).
"""
import sys

SEND, RECV = "send", "recv"


def deepspeed_stage(stages, micro_batches, stage, older_order):
    """One stage's instructions under DeepSpeed's TrainSchedule: ('F'|'B', mb) or a transfer."""

    def valid(mb):
        return 0 <= mb < micro_batches

    def step_to_micro_batch(step):
        even_step, even_stage = step % 2 == 0, stage % 2 == 0
        if even_step and even_stage:
            return step // 2 - stage // 2, True
        if not even_step and not even_stage:
            return (step - 1) // 2 - stage // 2, True
        if even_step:
            return step // 2 - stages + (stage + 1) // 2, False
        return (step - 1) // 2 - stages + 1 + stage // 2, False

    out, previous = [], -1
    for step in range(2 * (micro_batches + stages - 1)):
        mb, forward = step_to_micro_batch(step)
        exchange = []
        if forward and stage > 0:
            if valid(previous):
                exchange.append([(SEND, "grad", previous, stage - 1)])
            if valid(mb):
                exchange.append([(RECV, "act", mb, stage - 1)])
        if not forward and stage < stages - 1:
            if valid(mb):
                exchange.append([(RECV, "grad", mb, stage + 1)])
            if valid(previous):
                exchange.append([(SEND, "act", previous, stage + 1)])
        # current: a forward step sends the gradient, then receives; a backward step receives, then
        # sends the activation. The older order is the reverse of both.
        out += reversed(exchange) if older_order else exchange
        if valid(mb):
            out.append(("F" if forward else "B", mb))
        previous = mb
    return out


def megatron_stage(stages, micro_batches, stage):
    """One stage's instructions under Megatron's 1F1B, with its paired exchanges."""
    warmup = min(stages - stage - 1, micro_batches)
    first, last = stage == 0, stage == stages - 1

    def group(*transfers):
        """One exchange of the transfers that apply to this stage; none when none does."""
        present = [t for t in transfers if t is not None]
        return [present] if present else []

    recv_act = lambda mb: None if first else (RECV, "act", mb, stage - 1)
    send_act = lambda mb: None if last else (SEND, "act", mb, stage + 1)
    recv_grad = lambda mb: None if last else (RECV, "grad", mb, stage + 1)
    send_grad = lambda mb: None if first else (SEND, "grad", mb, stage - 1)
    out = []
    for mb in range(warmup):
        out += group(recv_act(mb)) + [("F", mb)] + group(send_act(mb))
    steady = micro_batches - warmup
    if steady > 0:
        out += group(recv_act(warmup))
    for i in range(steady):
        out += [("F", warmup + i)] + group(send_act(warmup + i), recv_grad(i)) + [("B", i)]
        next_input = recv_act(warmup + i + 1) if i < steady - 1 else None
        out += group(send_grad(i), next_input)
    for mb in range(steady, micro_batches):
        out += group(recv_grad(mb)) + [("B", mb)] + group(send_grad(mb))
    return out


def programs(stage_program, stages, micro_batches, *options):
    """Every stage's instructions under one schedule."""
    return [stage_program(stages, micro_batches, s, *options) for s in range(stages)]


def step_time(stage_programs, forward_s, backward_s, transfer_s):
    """The step: every stage runs its instructions in order; a group of transfers holds its stage
    until each of them has met its peer and run for transfer_s."""
    n = len(stage_programs)
    pc, clock, waiting = [0] * n, [0.0] * n, [None] * n
    posted, done = {}, {}
    while any(pc[s] < len(stage_programs[s]) for s in range(n)):
        moved = False
        for s in range(n):
            while pc[s] < len(stage_programs[s]):
                op = stage_programs[s][pc[s]]
                if isinstance(op, tuple):
                    clock[s] += forward_s if op[0] == "F" else backward_s
                    pc[s], moved = pc[s] + 1, True
                    continue
                if waiting[s] is None:
                    waiting[s] = []
                    for kind, what, mb, peer in op:
                        key = (what, mb) + ((s, peer) if kind == SEND else (peer, s))
                        waiting[s].append(key)
                        if key in posted:
                            done[key] = max(posted.pop(key), clock[s]) + transfer_s
                        else:
                            posted[key] = clock[s]
                    moved = True
                if not all(k in done for k in waiting[s]):
                    break
                clock[s] = max([clock[s]] + [done[k] for k in waiting[s]])
                waiting[s], pc[s], moved = None, pc[s] + 1, True
        if not moved:
            sys.exit("the schedules deadlocked: a bug in this script")
    return max(clock)


# Rows of vTrain's cluster the model gives too fast: stages, micro-batches, the critical stage's
# compute and recompute for the step (`racksim run` of the row with the A100 calibration file),
# spread over the micro-batches as F + B with B = 3F (backward twice the forward, plus the
# recompute), and the transfer of 1/TP of the activation over one 100 Gb/s NIC.
ROWS = [
    ("18.4B TP4 PP2 DP32 mb4", 2, 8, 4.7426 + 1.5627, 25.2e6 / 12.5e9),
    ("18.4B TP4 PP2 DP32 mb2", 2, 16, 4.8314 + 1.5739, 12.6e6 / 12.5e9),
    ("18.4B TP2 PP4 DP32 mb4", 4, 8, 4.7440 + 1.5097, 50.3e6 / 12.5e9),
    ("39.1B TP2 PP8 DP32 mb2", 8, 24, 7.4749 + 2.2876, 33.5e6 / 12.5e9),
]


def main():
    print("row | transfer | Megatron 1F1B | DeepSpeed (current order) | DeepSpeed (older order)")
    for name, stages, mbs, stage_compute_s, t in ROWS:
        f = stage_compute_s / mbs / 4
        b = 3 * f
        for transfer in (t, 2 * t + 0.5e-3):  # as racksim sends it; the whole activation and more
            megatron = step_time(programs(megatron_stage, stages, mbs), f, b, transfer)
            ds = [step_time(programs(deepspeed_stage, stages, mbs, older), f, b, transfer)
                  for older in (False, True)]
            print(f"{name} | {transfer * 1e3:.1f} ms | {megatron:.3f} s | "
                  + " | ".join(f"{d:.3f} s ({(d / megatron - 1) * 100:+.2f} %)" for d in ds))
    free = [step_time(programs(megatron_stage, 4, 8), 1.0, 3.0, 0.0),
            step_time(programs(deepspeed_stage, 4, 8, False), 1.0, 3.0, 0.0)]
    print(f"free transfers, 4 stages, 8 micro-batches, B = 3F: Megatron {free[0]:.1f} F, "
          f"DeepSpeed {free[1]:.1f} F, (m + p - 1)(F + B) = {(8 + 4 - 1) * 4.0:.1f} F")


def self_test():
    failures = []
    for stages, mbs in [(2, 1), (2, 8), (3, 5), (4, 8), (8, 8), (8, 24), (16, 48)]:
        schedules = {
            "megatron": programs(megatron_stage, stages, mbs),
            "deepspeed": programs(deepspeed_stage, stages, mbs, False),
            "deepspeed, older order": programs(deepspeed_stage, stages, mbs, True),
        }
        ideal = (mbs + stages - 1) * (1.0 + 3.0)
        for name, program in schedules.items():
            got = step_time(program, 1.0, 3.0, 0.0)
            if abs(got - ideal) > 1e-9:
                failures.append(f"{name}, p={stages} m={mbs}, free transfers: {got} != {ideal}")
        timed = {name: step_time(program, 1.0, 3.0, 0.05) for name, program in schedules.items()}
        if abs(timed["deepspeed"] - timed["deepspeed, older order"]) > 1e-9:
            failures.append(f"p={stages} m={mbs}: DeepSpeed's two orders differ: {timed}")
        if timed["deepspeed"] < timed["megatron"] - 1e-9:
            failures.append(f"p={stages} m={mbs}: DeepSpeed faster than Megatron: {timed}")
        if stages == 2:
            closed = (mbs + 1) * (1.0 + 3.0) + 2 * mbs * 0.05
            if abs(timed["deepspeed"] - closed) > 1e-9:
                failures.append(f"p=2 m={mbs}: DeepSpeed {timed['deepspeed']} != {closed}")
    for failure in failures:
        print("FAIL:", failure)
    print("self-test:", "failed" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else main())
