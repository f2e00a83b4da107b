#!/usr/bin/env python3
"""Fit the routing's skew on one row, predict it on the others: NVIDIA's Megatron-MoE-ModelZoo
prints each of its long-context Qwen3-235B runs on 256 H100 twice, with the routing forced to
balance and dropless with the model's own routing (data/published/megatron-moe-modelzoo.csv).
The ratio of the two step times is what the routing's imbalance costs; it shrinks as the
sequence grows, because attention, which the routing does not touch, takes more of the step.

usage: scripts/routing-skew-extrapolation.py RACKSIM [--exponent Z] [--jobs N]

racksim runs every H100 row twice: training.routing BALANCED, and ZIPF with the exponent Z
(0.64 by default: the value whose 16K ratio is the published one, found by hand as
docs/validation.md says), both with a plain all-to-all (a deduplicated dispatch needs a
balanced load or a routing sample) and unfolded replicas (skewed routing cannot fold). It
prints the published and the predicted ratios; the rows after the first are predictions, not
fits. About 3 minutes on 2 cores.
"""
import os, sys
from concurrent.futures import ThreadPoolExecutor

from csv_rows import csv_rows
from racksim_step import step_time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BASE = "scenarios/validation/megatron-moe-modelzoo.textproto"
DATA = "data/published/megatron-moe-modelzoo.csv"
# What both runs of a row take instead of the row's own: the plain all-to-all and no folding.
BOTH_RUNS = {"expert_placement.node_dedup_dispatch": "false", "sim.fold_replicas": "false"}


def parse_args(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if argv else 2)
    opts = {"racksim": os.path.abspath(argv[0]), "exponent": "0.64", "jobs": 2}
    args = argv[1:]
    while args[:1] in (["--exponent"], ["--jobs"]):
        opts[args[0][2:]] = args[1]
        args = args[2:]
    if args:
        sys.exit(f"routing-skew-extrapolation.py: unknown arguments {args} (see --help)")
    return opts


def simulate(racksim, row, routing):
    overrides = {**{k: v for k, v in row.items() if "." in k}, **BOTH_RUNS}
    step, why = step_time(racksim, BASE, overrides, routing, cwd=ROOT)
    if step is None:
        sys.exit(f"routing-skew-extrapolation.py: {row['name']}: {why}")
    return step


def main():
    opts = parse_args(sys.argv[1:])
    rows = [r for r in csv_rows(os.path.join(ROOT, DATA)) if r["dropless_tflops_per_gpu"]]
    skewed = ["--set", "training.routing=ZIPF",
              "--set", f"training.routing_zipf_exponent={opts['exponent']}"]
    jobs = [(r, routing) for r in rows for routing in ([], skewed)]
    with ThreadPoolExecutor(int(opts["jobs"])) as pool:
        steps = list(pool.map(lambda j: simulate(opts["racksim"], *j), jobs))
    print(f"| row | published dropless / forced | racksim ZIPF {opts['exponent']} / BALANCED | "
          "difference |")
    print("|---|---|---|---|")
    for i, r in enumerate(rows):
        # The same FLOPs per step: the step-time ratio is the inverse of the TFLOP/s ratio.
        published = float(r["published_tflops_per_gpu"]) / float(r["dropless_tflops_per_gpu"])
        predicted = steps[2 * i + 1] / steps[2 * i]
        role = "fitted" if i == 0 else "predicted"
        print(f"| {r['name']} ({role}) | {published:.3f} | {predicted:.3f} | "
              f"{100 * (predicted - published):+.1f} points |")


if __name__ == "__main__":
    main()
