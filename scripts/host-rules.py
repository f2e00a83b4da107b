#!/usr/bin/env python3
"""Ways for the host's time to meet the GPU's, tried on one layer against vTrain's single node.

`scripts/layer-split.py --per-micro-batch` reads, from the measured single-node rows alone, what
one more layer costs per micro-batch at each hidden size, TP degree and micro-batch. This script
asks racksim for the same layer's kernels with no host time (`racksim run --timeline full` on the
calibration base with the adopted `a100-kernel-calibration.textproto` and `cpu_launch_floor_s`
at 1 ns: each kernel's GPU time, each all-reduce's time from vTrain's measured table), then
combines them with a host time per kernel under several rules and prints each rule's layer cost
beside the measured one:

- GPU only, host only: the two bounds no rule goes under;
- per-kernel floor (racksim's PER_KERNEL, the adopted rule): each kernel lasts at least the host's
  time for it;
- queue (racksim's AHEAD): the host issues kernels one host time apart and runs ahead of the GPU;
- queue, collectives synchronous: the same, but the host waits for each all-reduce to end;
- queue two deep: the host issues a kernel once the one two before it has ended;
- queue, synchronized per pass: the host also waits for the GPU at the end of each of a layer's
  passes (its forward, its recomputation, its backward), as activation checkpointing that
  synchronizes at its boundaries does (DeepSpeed's `synchronize_checkpoint_boundary`).

A rule is only worth building into the replay if it meets the measured layer costs; the fits
that test a rule on whole steps take minutes, this takes seconds. --check exits 1 unless the
per-kernel floor reproduces racksim's own per-layer costs (so the extraction is the replay's)
and the measured 2,048-wide TP1 layer at micro-batch 4 stays under its GPU time alone (so no
host rule can reach it: docs/validation.md, experiment log, "7 December").

    scripts/host-rules.py build/racksim [--floor-us 67.8] [--collective-us 0] [--check]

--kineto TRACE [--check] reads a PyTorch profiler trace instead and says which rule its stack
follows: for the kernels after each long one on the busiest stream, how long after its
predecessor each starts (the GPU's gap) and how long after its launch (how far the host ran
ahead). A queue shows as gaps near zero with long lags until the host's lead runs out; a
per-kernel floor as gaps of a host time each. --check exits 1 unless the first kernel after a
long one shows the queue (a trace whose events were sampled does not: its gaps hide kernels).

    scripts/host-rules.py --kineto tests/data/kineto/hta-nccl-2ranks-rank0.json.gz

Standard library only; about 5 seconds.
"""
import argparse
import gzip
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAL = os.path.join(ROOT, "scenarios", "calibration")
ALL_ROWS = os.path.join(CAL, "a100-single-node-all-rows.json")
# The adopted calibration file itself, so the terms cannot drift from it; no host time.
ADOPTED = ["calibration=scenarios/calibration/a100-kernel-calibration.textproto",
           "hardware.nodes=1", "sim.fold_replicas=false",
           "hardware.compute.cpu_launch_floor_s=1e-9"]
LAYER, MICRO_BATCH = 5, 1  # a layer and micro-batch in the middle of the step


def layer_split():
    spec = importlib.util.spec_from_file_location(
        "layer_split", os.path.join(ROOT, "scripts", "layer-split.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measured_cells():
    """{(hidden, tp, micro-batch): (measured, racksim's) seconds per layer and micro-batch}."""
    split = layer_split()
    groups = split.per_micro_batch(split.series_of(split.read_points(ALL_ROWS)))
    return {key: (split.mean_costs(entries, 0)[0], split.mean_costs(entries, 1)[0])
            for key, entries in sorted(groups.items())}


def layer_kernels(racksim, hidden, tp, mb, workdir):
    """One layer's kernels in issue order: (host kernels, GPU seconds, is a collective, ends one
    of the layer's passes: its forward, its recomputation or its backward)."""
    out = os.path.join(workdir, f"{hidden}_{tp}_{mb}")
    sets = ADOPTED + [f"model.hidden_size={hidden}", "model.num_heads=16", "model.num_layers=12",
                      f"model.ffn_hidden_size={4 * hidden}", "training.seq_length=1024",
                      "hardware.gpus_per_node=8", f"layout.tp={tp}", "layout.pp=1",
                      f"training.micro_batch_size={mb}",
                      f"training.global_batch_size={mb * 2 * (8 // tp)}"]
    cmd = [racksim, "run", os.path.join(CAL, "a100-vtrain-kernel-base.textproto"), "--out", out,
           "--timeline", "full"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    with gzip.open(os.path.join(out, "timeline.json.gz"), "rt", encoding="utf-8") as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    ops = sorted((e for e in events if e.get("pid") == 0 and e.get("ph") == "X"
                  and e["args"].get("micro_batch") == MICRO_BATCH
                  and e["args"].get("layer") == LAYER), key=lambda e: e["ts"])
    kernels = []
    for i, e in enumerate(ops):
        collective = e["args"]["kind"] == "collective"
        phase = e["args"]["phase"]
        backward_gemm = e["args"].get("class") == "gemm" and phase == "backward"
        ends_pass = i + 1 == len(ops) or ops[i + 1]["args"]["phase"] != phase
        kernels.append((0 if collective else 2 if backward_gemm else 1, e["dur"] * 1e-6,
                        collective, ends_pass))
    return kernels


def per_kernel_floor(kernels, host_s):
    return sum(g if c else max(k * host_s, g) for k, g, c, _ in kernels)


def queue(kernels, host_s, call_s=0.0, depth=None, collectives_sync=False, pass_sync=False,
          layers=12):
    """The step's layers one after another; the cost of one, once the queue is in its rhythm.
    call_s: the host's time to issue a collective; pass_sync: the host waits for the GPU at the
    end of each of a layer's passes (as activation checkpointing that synchronizes at its
    boundaries does)."""
    issued = ended = 0.0
    ends = []
    for _ in range(layers):
        for k, g, c, ends_pass in kernels:
            issued += call_s if c else k * host_s
            if depth is not None and len(ends) >= depth:
                issued = max(issued, ends[-depth])
            ended = max(issued, ended) + g
            ends.append(ended)
            if (collectives_sync and c) or (pass_sync and ends_pass):
                issued = max(issued, ended)
    return ended / layers


def rules(host_s, call_s):
    return [
        ("GPU only", lambda ks: sum(k[1] for k in ks)),
        ("host only", lambda ks: sum(call_s if c else k * host_s for k, _, c, _ in ks)),
        ("per-kernel floor", lambda ks: per_kernel_floor(ks, host_s)),
        ("queue", lambda ks: queue(ks, host_s, call_s)),
        ("queue, collectives synchronous",
         lambda ks: queue(ks, host_s, call_s, collectives_sync=True)),
        ("queue two deep", lambda ks: queue(ks, host_s, call_s, depth=2)),
        ("queue, synchronized per pass", lambda ks: queue(ks, host_s, call_s, pass_sync=True)),
    ]


LONG_KERNEL_US, FOLLOWERS = 300, 5


def kineto_followers(path, check):
    """Prints, for the kernels after each one longer than LONG_KERNEL_US on the busiest GPU
    stream, the median gap after the previous kernel and lag after its own launch. With `check`,
    exits 1 unless the first of them shows a queue: a gap under 5 us, a lag over 50 us."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    launched = {e["args"]["correlation"]: e["ts"] for e in events
                if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    streams = {}
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            streams.setdefault(e.get("tid"), []).append(e)
    work = sorted(max(streams.values(), key=len), key=lambda e: e["ts"])
    rows = {j: [] for j in range(1, FOLLOWERS + 1)}
    for i, long_one in enumerate(work[:-FOLLOWERS]):
        if long_one["dur"] <= LONG_KERNEL_US:
            continue
        for j in range(1, FOLLOWERS + 1):
            this, before = work[i + j], work[i + j - 1]
            launch = launched.get(this.get("args", {}).get("correlation"))
            if launch is not None:
                rows[j].append((this["ts"] - before["ts"] - before["dur"], this["ts"] - launch))
    print(f"{path}: kernels after each of the {len(rows[1])} kernels over {LONG_KERNEL_US} us")
    print("| kernel after the long one | median gap after the previous, us | median lag after "
          "its launch, us |")
    print("|---|---|---|")
    for j, found in rows.items():
        if found:
            print(f"| +{j} | {statistics.median(g for g, _ in found):.1f} "
                  f"| {statistics.median(lag for _, lag in found):.1f} |")
    first = rows[1]
    if check and not (first and statistics.median(g for g, _ in first) < 5
                      and statistics.median(lag for _, lag in first) > 50):
        print("check failed: the kernel after a long one shows no queue", file=sys.stderr)
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("racksim", nargs="?", default=None)
    parser.add_argument("--kineto", metavar="TRACE",
                        help="read a PyTorch profiler trace (.json.gz), not racksim's kernels")
    parser.add_argument("--floor-us", type=float, default=67.8,
                        help="the host's time per kernel, microseconds (the adopted 67.8)")
    parser.add_argument("--collective-us", type=float, default=0.0,
                        help="the host's time to issue a collective under the queues, "
                             "microseconds (the per-kernel floor gives collectives none)")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if args.kineto:
        return kineto_followers(args.kineto, args.check)
    if args.racksim is None:
        parser.error("give the racksim binary, or --kineto TRACE")
    host_s = args.floor_us * 1e-6
    cells = measured_cells()
    table = rules(host_s, args.collective_us * 1e-6)
    errors = {name: [] for name, _ in table}
    floor_vs_racksim = []
    gpu_bound_of_wide_tp1 = None  # (GPU time alone, measured) of hidden 2,048 TP1 micro-batch 4
    print("ms per layer and micro-batch: measured; racksim's own (the whole steps' split); then "
          "each rule on racksim's kernels with the host at %.1f us per kernel" % args.floor_us)
    print("| hidden | TP | mb | measured | racksim | " + " | ".join(n for n, _ in table) + " |")
    print("|---" * (5 + len(table)) + "|")
    with tempfile.TemporaryDirectory() as workdir:
        for (hidden, tp, mb), (measured, racksim_s) in cells.items():
            kernels = layer_kernels(args.racksim, hidden, tp, mb, workdir)
            costs = [rule(kernels) for _, rule in table]
            for (name, _), cost in zip(table, costs):
                errors[name].append(abs(cost / measured - 1))
            floor_vs_racksim.append(abs(costs[2] / racksim_s - 1))
            print(f"| {hidden:,} | {tp} | {mb} | {measured * 1e3:.2f} | {racksim_s * 1e3:.2f} | "
                  + " | ".join(f"{c * 1e3:.2f}" for c in costs) + " |")
            if (hidden, tp, mb) == (2048, 1, 4):
                gpu_bound_of_wide_tp1 = (costs[0], measured)
    print("| mean abs. error | | | | | " + " | ".join(
        f"{100 * sum(e) / len(e):.1f} %" for e in errors.values()) + " |")
    worst = max(floor_vs_racksim)
    print(f"per-kernel floor against racksim's own split: worst {100 * worst:.1f} %")
    if args.check:
        failures = []
        if worst > 0.08:
            failures.append(f"the per-kernel floor misses racksim's own layer cost by {worst:.1%}")
        if gpu_bound_of_wide_tp1 is None:
            failures.append("no measured cell at hidden 2,048 TP1 micro-batch 4")
        elif gpu_bound_of_wide_tp1[0] <= gpu_bound_of_wide_tp1[1]:
            failures.append("hidden 2,048 TP1 micro-batch 4: the GPU time alone no longer exceeds "
                            "the measured layer")
        for failure in failures:
            print("check failed:", failure, file=sys.stderr)
        return 1 if failures else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
