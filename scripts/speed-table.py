#!/usr/bin/env python3
"""Measures the speed targets (docs/speed.md) and prints the README's speed table.

usage: scripts/speed-table.py BUILD_DIR [--whole]

CPU seconds are user + system of racksim and every child it waited for (the steady state's two
shorter steps, a sweep's points), from `racksim bench` for single runs and from the children's
rusage for the sweep and the trace replay. --whole also measures each case replaying every
micro-batch (`--set sim.steady_state=false`; the sweep alone takes about 190 CPU seconds).
"""
import os, re, resource, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = [
    ("seed 290B MoE 512K, 32 B300", "scenarios/seed-290b-moe/512k.textproto"),
    ("Llama-3 70B on 64 H100", "scenarios/llama3-70b-h100-64.textproto"),
    ("Llama-3 405B on 16,384 H100, folded", "scenarios/llama3-405b-h100-16384.textproto"),
]
# The seed sweep, one sweep per pipeline depth with a first-stage split that depth accepts
# (the 512K file pins 22 layers for pp 2; 43 layers split evenly over no other depth).
SWEEP_DEPTHS = [(1, 0), (2, 22), (4, 10), (8, 8)]


def bench(racksim, scenario, extra):
    out = subprocess.run([racksim, "bench", scenario, *extra], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.splitlines()
    row = out[-1].split()
    # The row's columns from the right: step (s), RSS (MB), activities per CPU s, CPU (s).
    return float(row[-4]), float(row[-2]), float(row[-1])


def children_cpu(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def sweep_cpu(racksim, extra):
    total = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for pp, first in SWEEP_DEPTHS:
            total += children_cpu([
                racksim, "sweep", "scenarios/seed-290b-moe/512k.textproto",
                "--set", f"layout.pp={pp}", "--set", f"layout.first_stage_layers={first}",
                "--set", "layout.cp=4,8,16,32,64", "--set", "layout.ep=1,2,4,8,16", *extra,
                "--jobs", "2", "--out", os.path.join(tmp, f"pp{pp}")])
    return total


def trace_cpu(build, racksim):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([os.path.join(build, "dp_chakra_trace"), tmp, "256"], check=True,
                       stdout=subprocess.DEVNULL)
        return children_cpu([
            racksim, "replay", os.path.join(tmp, "dp"), "--hardware", "dgx-h100", "--nodes", "1",
            "--set", "hardware.gpus_per_node=256", "--set", "hardware.scale_up.domain_size=256",
            "--set", "hardware.scale_up.bytes_per_s=400e9", "--out", os.path.join(tmp, "out")])


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = os.path.abspath(sys.argv[1])
    racksim = os.path.join(build, "racksim")
    whole = "--whole" in sys.argv[2:]
    whole_set = ["--set", "sim.steady_state=false"]
    print("| case | CPU s | peak RSS | CPU s replaying every micro-batch |")
    print("|---|---|---|---|")
    for name, scenario in BENCH:
        cpu, rss, step = bench(racksim, scenario, [])
        before = f"{bench(racksim, scenario, whole_set)[0]:.2f}" if whole else ""
        print(f"| {name} (step {step:.4f} s) | {cpu:.2f} | {rss:.0f} MB | {before} |")
    before = f"{sweep_cpu(racksim, whole_set):.1f}" if whole else ""
    print(f"| 100 layouts of the seed case (`racksim sweep`, 2 workers) | {sweep_cpu(racksim, []):.1f} "
          f"in all | | {before} |")
    print(f"| 256-rank data-parallel Chakra trace replayed | {trace_cpu(build, racksim):.2f} | | |")


if __name__ == "__main__":
    main()
