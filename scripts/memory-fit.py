#!/usr/bin/env python3
"""Does every published run fit its GPUs' memory, as racksim's memory ledger counts it?

usage: scripts/memory-fit.py RACKSIM [--jobs N] [--check]

Each row of the validation tables (scripts/validate.py's TABLES, their data files) ran on its
cluster, so its busiest rank's peak must lie within the GPU's memory. For every row this runs
`racksim memory BASE --set <the row's columns> --json` and prints the busiest rank's peak
against the capacity; FP8 rows once more under Transformer Engine's rule
(`training.fp8_activations=LINEAR_INPUTS`). --check exits 1 when a row does not fit under the
default rule, except the rows KNOWN_OVER names with the reason, or when one of those fits (the
list is then stale). The vTrain A100 single-node rows (1,440, small models) are not read.
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from csv_rows import csv_rows  # noqa: E402
from racksim_step import set_args  # noqa: E402
from validate import ROOT, TABLES, with_layouts  # noqa: E402

TE_RULE = ["--set", "training.fp8_activations=LINEAR_INPUTS"]
# The 24.12 page repeats the 24.07 rows' layouts: read once.
SKIP = {"nemo-docs-24.12-h100"}
# Rows the ledger puts over their GPUs' memory, and why that is not taken as the ledger's miss.
KNOWN_OVER = {
    "gpt-oss-120b-h100-25.11":
        "the page prints micro-batch 4; Megatron-Bridge's recipe for this layout on H100 "
        "(scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py, "
        "GPT_OSS_120B_PRETRAIN_CONFIG_H100_BF16_V1) sets micro-batch 1, the Blackwell rows 4; "
        "at micro-batch 1 the busiest rank holds 54 GB",
}


def memory(racksim, base, row, extra):
    """(peak GB, capacity GB) of the busiest rank, or None where racksim refuses the input (a
    BF16 row under the FP8 rule)."""
    sets = set_args({k: v for k, v in row.items() if "." in k})
    out = subprocess.run([racksim, "memory", base, *sets, *extra, "--json"], capture_output=True,
                         text=True, cwd=ROOT)
    if out.returncode == 2:
        return None
    if out.returncode != 0:
        sys.exit(f"memory-fit.py: {row['name']}: {out.stderr.strip()}")
    m = json.loads(out.stdout)["memory"]
    return m["peak_bytes"] / 1e9, m["capacity_bytes"] / 1e9


def rows():
    for name, table in TABLES.items():
        if name in SKIP:
            continue
        data = table.get("data", os.path.join("data", "published", name + ".csv"))
        for row in with_layouts(csv_rows(os.path.join(ROOT, data)), table.get("layouts")):
            yield name, table["base"], row


def cell(result):
    if result is None:
        return "-"
    peak, capacity = result
    return f"{peak:.1f} of {capacity:.1f}" + ("" if peak <= capacity else " OVER")


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if args else 2)
    racksim = os.path.abspath(args[0])
    jobs = int(args[args.index("--jobs") + 1]) if "--jobs" in args else 1
    todo = list(rows())
    with ThreadPoolExecutor(jobs) as pool:
        default = list(pool.map(lambda r: memory(racksim, r[1], r[2], []), todo))
        te = list(pool.map(lambda r: memory(racksim, r[1], r[2], TE_RULE), todo))
    print("| table | row | busiest rank, GB (default) | under LINEAR_INPUTS |")
    print("|---|---|---|---|")
    over = []
    for (table, _, row), d, t in zip(todo, default, te):
        print(f"| {table} | {row['name']} | {cell(d)} | {cell(t)} |")
        if d[0] > d[1]:
            over.append(f"{table} {row['name']}")
    fp8 = [t for t in te if t is not None]
    print(f"\n{len(todo) - len(over)} of {len(todo)} rows fit under the default rule; "
          f"{sum(p <= c for p, c in fp8)} of {len(fp8)} FP8 rows under LINEAR_INPUTS.")
    for name in over:
        print(f"over: {name}: {KNOWN_OVER.get(name.split()[-1], 'NOT EXPLAINED')}")
    unexplained = [n for n in over if n.split()[-1] not in KNOWN_OVER]
    stale = set(KNOWN_OVER) - {n.split()[-1] for n in over}
    if stale:
        print("KNOWN_OVER rows that now fit: " + ", ".join(sorted(stale)))
    if "--check" in args and (unexplained or stale):
        sys.exit(1)


if __name__ == "__main__":
    main()
