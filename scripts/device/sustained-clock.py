#!/usr/bin/env python3
"""The sustained clock ratio of a Hopper GPU from scripts/device/measure-hopper.py's output.

usage: scripts/device/sustained-clock.py DIR [--write CALIBRATION.textproto]
       scripts/device/sustained-clock.py --self-test

DIR holds sustained.csv (an 8,192-cube BF16 and FP8 GEMM run back to back, one row per second
of each: dtype, t_s, tflops) and, if nvidia-smi ran, smi.csv (SM clock every 100 ms). For each
dtype the burst rate is its first second (the clocks not yet held down) and the sustained rate
the mean of the seconds after the first SETTLE_S (measure-hopper.py pauses before each run so
that the first second starts from cool clocks); their ratio is what
hardware.compute.sustained_clock_ratio says (a GEMM's tiles slow with the SM clock). The FP8
ratio is the one the FP8 validation rows need; --write puts it into a calibration file like
scenarios/calibration/hopper-clock-calibration.textproto, with where it came from.
"""
import csv
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from csv_rows import csv_rows  # noqa: E402  (scripts/csv_rows.py, the data files' reader)

SETTLE_S = 5.0  # seconds a GPU takes to reach its power-limited clock, left out of the mean


def ratios(sustained_rows):
    """{dtype: (burst TFLOP/s, sustained TFLOP/s, ratio)} from sustained.csv's rows."""
    out = {}
    for dtype in sorted({r["dtype"] for r in sustained_rows}):
        runs = sorted(((float(r["t_s"]), float(r["tflops"])) for r in sustained_rows
                       if r["dtype"] == dtype), key=lambda x: x[0])
        later = [tflops for t, tflops in runs if t > SETTLE_S]
        if not runs or not later:
            sys.exit(f"sustained-clock: {dtype}: fewer than {SETTLE_S:.0f} s of samples")
        burst, held = runs[0][1], statistics.mean(later)
        out[dtype] = (burst, held, held / burst)
    return out


def sm_clocks(path):
    """(highest, median) SM clock in MHz that nvidia-smi sampled, or None without smi.csv."""
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = [h.strip() for h in next(reader)]
        column = header.index("clocks.sm")
        clocks = [number(row[column]) for row in reader if len(row) > column]
    clocks = [c for c in clocks if c is not None]  # nvidia-smi writes [N/A] where it has none
    return (max(clocks), statistics.median(clocks)) if clocks else None


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def calibration_text(ratio, source):
    return ("# racksim calibration\n"
            "# The SM clock a Hopper GPU held through a sustained FP8 GEMM over its first second,\n"
            f"# measured: {source} (scripts/device/sustained-clock.py).\n"
            "# include it with  calibration: \"<this file>\"  or --set calibration=<this file>\n"
            "hardware {\n  compute {\n"
            f"    sustained_clock_ratio: {ratio:.3f}\n"
            "  }\n}\n")


def report(directory, write_path=None):
    found = ratios(csv_rows(os.path.join(directory, "sustained.csv")))
    for dtype, (burst, held, ratio) in found.items():
        print(f"{dtype}: first second {burst:.1f} TFLOP/s, after {SETTLE_S:.0f} s {held:.1f} "
              f"TFLOP/s: ratio {ratio:.3f}")
    clocks = sm_clocks(os.path.join(directory, "smi.csv"))
    if clocks:
        print(f"SM clock: highest {clocks[0]:.0f} MHz, median {clocks[1]:.0f} MHz "
              f"({clocks[1] / clocks[0]:.3f})")
    if write_path:
        if "fp8" not in found:
            sys.exit("sustained-clock: no FP8 run in sustained.csv")
        if os.path.exists(write_path):
            sys.exit(f"sustained-clock: {write_path} exists; not overwritten")
        with open(write_path, "w") as f:
            f.write(calibration_text(found["fp8"][2], os.path.abspath(directory)))
    return found


def self_test():
    """Synthetic output: FP8 at 1,400 TFLOP/s for a second, then 1,120 (0.8); BF16 at 0.9."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "sustained.csv"), "w") as f:
            f.write("dtype,m,n,k,t_s,calls,tflops\n")
            for t in range(1, 26):
                f.write(f"fp8,8192,8192,8192,{t}.00,100,{1400 if t == 1 else 1120}\n")
                f.write(f"bf16,8192,8192,8192,{t}.00,100,{700 if t == 1 else 630}\n")
        with open(os.path.join(d, "smi.csv"), "w") as f:
            f.write("timestamp,clocks.sm,clocks.mem,power.draw\n")
            f.write("t,1980,2619,300\nt,1575,2619,700\nt,1575,2619,700\nt,[N/A],2619,700\n")
        out = os.path.join(d, "clock.textproto")
        found = report(d, out)
        assert abs(found["fp8"][2] - 0.8) < 1e-9 and abs(found["bf16"][2] - 0.9) < 1e-9, found
        assert "sustained_clock_ratio: 0.800" in open(out).read()
        assert sm_clocks(os.path.join(d, "smi.csv")) == (1980.0, 1575.0)
    print("sustained-clock: self-test passed")


def main(args):
    if args == ["--self-test"]:
        self_test()
    elif len(args) == 1:
        report(args[0])
    elif len(args) == 3 and args[1] == "--write":
        report(args[0], args[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
