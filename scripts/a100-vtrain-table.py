#!/usr/bin/env python3
"""Simulates every vTrain multi-node row on the a100-vtrain-cluster preset and writes the table of
measured against simulated step times (scenarios/calibration/a100-vtrain-results.csv) with the
errors: mean absolute percentage error over all rows and per model size, and Spearman's rank
correlation of the layouts within each size. The preset's one multi-node term (the fixed cost of
a step across nodes) was fitted on all 41 rows, its kernel terms on the single-node rows; the
leave-the-largest-size-out error is `racksim calibrate`'s (docs/validation.md).

usage: scripts/a100-vtrain-table.py RACKSIM [--jobs N] [--timeout S] [--set PATH=VALUE ...]

A row whose simulation takes longer than S seconds (default: no limit) is listed as not
simulated and left out of the errors.
"""
import csv, os, sys
from concurrent.futures import ThreadPoolExecutor

from csv_rows import csv_rows
from rank_stats import spearman
from racksim_step import step_time

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "calibration")
BASE = os.path.join(HERE, "a100-vtrain-base.textproto")


def rows(name):
    return csv_rows(os.path.join(HERE, name))


def simulate(racksim, row, extra, timeout):
    """A row's step time, None past `timeout` s: every column but the group and the measurement
    is a scenario override."""
    step, why = step_time(racksim, BASE, {k: v for k, v in row.items()
                                          if k not in ("group", "measured_step_time_ms")},
                          extra, timeout)
    if step is None and not why.startswith("over"):
        sys.exit(f"a100-vtrain-table.py: racksim failed: {why}")
    return step


def mape(points):
    return 100 * sum(abs(p["sim_s"] / p["meas_s"] - 1) for p in points) / len(points)


def main():
    racksim = sys.argv[1]
    args = sys.argv[2:]
    jobs, timeout = 2, None
    while args[:1] in (["--jobs"], ["--timeout"]):
        if args[0] == "--jobs":
            jobs = int(args[1])
        else:
            timeout = float(args[1])
        args = args[2:]
    points = rows("a100-multi-node.csv")
    with ThreadPoolExecutor(jobs) as pool:
        sims = list(pool.map(lambda r: simulate(racksim, r, args, timeout), points))
    for p, s in zip(points, sims):
        p["meas_s"] = float(p["measured_step_time_ms"]) / 1000
        p["sim_s"] = s
    skipped = [p for p in points if p["sim_s"] is None]
    points = [p for p in points if p["sim_s"] is not None]
    out = os.path.join(HERE, "a100-vtrain-results.csv")
    with open(out, "w", newline="") as f:
        f.write("# measured (vTrain) against simulated (racksim run a100-vtrain-base.textproto, "
                "preset a100-vtrain-cluster) step times; written by scripts/a100-vtrain-table.py\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["group", "tp", "pp", "dp", "micro_batch", "measured_s", "simulated_s",
                    "error_pct"])
        for p in skipped:
            w.writerow([p["group"], p["layout.tp"], p["layout.pp"], p["layout.dp"],
                        p["training.micro_batch_size"],
                        f"{float(p['measured_step_time_ms']) / 1000:.4f}",
                        f"not simulated (over {timeout:g} s)", ""])
        for p in points:
            w.writerow([p["group"], p["layout.tp"], p["layout.pp"], p["layout.dp"],
                        p["training.micro_batch_size"], f"{p['meas_s']:.4f}", f"{p['sim_s']:.4f}",
                        f"{100 * (p['sim_s'] / p['meas_s'] - 1):+.1f}"])
    print(f"MAPE all {len(points)} rows: {mape(points):.1f} %")
    for group in sorted({p["group"] for p in points}):
        sel = [p for p in points if p["group"] == group]
        rho = spearman([p["meas_s"] for p in sel], [p["sim_s"] for p in sel])
        print(f"{group}: {len(sel)} layouts, MAPE {mape(sel):.1f} %, Spearman {rho:.3f}")
    print(f"table: {out}")


if __name__ == "__main__":
    main()
