#!/usr/bin/env python3
"""racksim's collectives against measured nccl-tests tables.

usage: scripts/nccl-table.py RACKSIM [--table CSV --hardware PRESET] [--set PATH=VALUE ...]

Without --table: reads data/measured/vtrain-a100-nccl-allreduce.csv (nccl-tests all_reduce_perf
on 2-8 A100 of one DGX A100 node, the tables vTrain ships), runs `racksim collective --hardware
dgx-a100` for the same GPU counts and sizes, once with the preset as it is and once with the
per-call cost of the A100 calibration (scenarios/calibration/a100-kernel-calibration.textproto),
and writes data/measured/vtrain-a100-nccl-allreduce-results.csv with the error of each row
(predicted / measured out-of-place time - 1). Prints the mean error and MAPE per GPU count.

With --table CSV --hardware PRESET: the same for your own nccl-tests results, in the format
`hardware.collectives.measured_table` reads (collective (all_reduce, all_gather, reduce_scatter
or all_to_all; all_reduce when absent), gpus, size_bytes, time_us or out_of_place_time_us;
docs/topologies.md shows how to write it from nccl-tests' output), on one node of PRESET, the
preset as it is: how far racksim's collective model is from your cluster before you hand it the
table. Nothing is written.

Extra `--set` arguments go to every racksim run (a what-if, e.g. --set
hardware.scale_up.efficiency=0.7; the results file is then left as it was).
"""
import csv, os, re, subprocess, sys
from csv_rows import csv_rows

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "data", "measured", "vtrain-a100-nccl-allreduce.csv")
RESULTS = os.path.join(ROOT, "data", "measured", "vtrain-a100-nccl-allreduce-results.csv")
CALIBRATION = os.path.join(ROOT, "scenarios", "calibration", "a100-kernel-calibration.textproto")


def calibrated_latency_args():
    """The calibration's per-call cost, read from its file so the two cannot drift apart."""
    with open(CALIBRATION) as f:
        latency = re.search(r"base_latency_s:\s*([0-9.eE+-]+)", f.read()).group(1)
    return ["--set", f"hardware.collectives.base_latency_s={latency}"]


def measured_rows(path):
    rows = csv_rows(path)
    for r in rows:
        r["measured_us"] = float(r.get("time_us") or r["out_of_place_time_us"])
        r["op"] = (r.get("collective") or "all_reduce").removesuffix("_perf")
    return rows


def predicted_us(racksim, hardware, op, gpus, size, extra):
    """racksim collective's time for one `op` of `size` bytes on `gpus` GPUs of one node."""
    out = subprocess.run([racksim, "collective", "--hardware", hardware, "--nodes", "1",
                          "--op", op, "--ranks", str(gpus), "--min-bytes", str(size),
                          "--max-bytes", str(size), *extra],
                         capture_output=True, text=True, check=True).stdout
    row = next(l.split() for l in out.splitlines() if l.split()[:1] == [str(size)])
    return float(row[1])


def summary(label, errors):
    mean = 100 * sum(errors) / len(errors)
    mape = 100 * sum(abs(e) for e in errors) / len(errors)
    return f"{label}: mean error {mean:+.1f} %, MAPE {mape:.1f} % ({len(errors)} rows)"


def option(args, name):
    """The value of `name` in args, removed from them (None when absent)."""
    if name not in args:
        return None
    i = args.index(name)
    value = args[i + 1]
    del args[i:i + 2]
    return value


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    racksim, extra = sys.argv[1], sys.argv[2:]
    table, hardware = option(extra, "--table"), option(extra, "--hardware")
    if (table is None) != (hardware is None):
        sys.exit("nccl-table: --table and --hardware go together")
    configs = ({"preset": extra} if table else
               {"preset": extra, "calibrated": calibrated_latency_args() + extra})
    rows = measured_rows(table or DATA)
    for r in rows:
        for name, args in configs.items():
            r[name] = predicted_us(racksim, hardware or "dgx-a100", r["op"], int(r["gpus"]),
                                   int(float(r["size_bytes"])), args)
    for name in configs:
        print(summary(f"{name}, all", [r[name] / r["measured_us"] - 1 for r in rows]))
        for op, gpus in sorted({(r["op"], int(r["gpus"])) for r in rows}):
            errors = [r[name] / r["measured_us"] - 1 for r in rows
                      if r["op"] == op and int(r["gpus"]) == gpus]
            print("  " + summary(f"{op} on {gpus} GPUs", errors))
    if extra or table:
        print("(--set or --table: the results file is left as it was)")
        return
    with open(RESULTS, "w", newline="") as f:
        f.write("# racksim collective --hardware dgx-a100 against vtrain-a100-nccl-allreduce.csv; "
                "written by scripts/nccl-table.py\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpus", "size_bytes", "measured_us"] +
                   [c for name in configs for c in (f"{name}_us", f"{name}_error_percent")])
        for r in rows:
            w.writerow([r["gpus"], r["size_bytes"], f"{r['measured_us']:g}"] +
                       [c for name in configs
                        for c in (f"{r[name]:.2f}", f"{100 * (r[name] / r['measured_us'] - 1):+.1f}")])
    print(f"table: {RESULTS}")


if __name__ == "__main__":
    main()
