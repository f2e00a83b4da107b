#!/usr/bin/env python3
"""The sustained clock ratio of a Hopper GPU from scripts/device/measure-hopper.py's output.

usage: scripts/device/sustained-clock.py DIR [--write CALIBRATION.textproto]
       scripts/device/sustained-clock.py --self-test

DIR holds sustained.csv (an 8,192-cube BF16 and FP8 GEMM run back to back after an idle pause:
dtype, t_s, tflops per timing window; measure-hopper.py times the first FINE_FOR_S in short
windows and the rest in one-second windows) and, if nvidia-smi ran, smi.csv (SM clock every
100 ms). Per dtype: the burst rate is the best window that ends within BURST_S of the start
(on an H200 at 700 W the power limit bites within 0.1-0.3 s, so a one-second window already
averages it away: such a file has no burst reading and is refused); the held rate is the mean
of the windows after SETTLE_S. Their ratio is what hardware.compute.sustained_clock_ratio
means: how much slower a FLOP-bound kernel runs once the clocks are held down, as throughput,
which falls less than the SM clock does (the clock is printed beside it). --write puts the FP8
ratio into a calibration file, with where it came from. scripts/device/measure-step-mix.py
measures the same ratio over one transformer layer's own mix of kernels instead of one GEMM.
"""
import csv
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from csv_rows import csv_rows  # noqa: E402  (scripts/csv_rows.py, the data files' reader)

SETTLE_S = 5.0  # seconds a GPU takes to reach its power-limited clock, left out of the mean
BURST_S = 0.25  # windows ending this soon after the start count as the burst


def ratios(sustained_rows):
    """{dtype: (burst TFLOP/s, sustained TFLOP/s, ratio)} from sustained.csv's rows."""
    out = {}
    for dtype in sorted({r["dtype"] for r in sustained_rows}):
        runs = sorted(((float(r["t_s"]), float(r["tflops"])) for r in sustained_rows
                       if r["dtype"] == dtype), key=lambda x: x[0])
        later = [tflops for t, tflops in runs if t > SETTLE_S]
        if not runs or not later:
            sys.exit(f"sustained-clock: {dtype}: fewer than {SETTLE_S:.0f} s of samples")
        early = [tflops for t, tflops in runs if t <= BURST_S]
        if not early:
            sys.exit(f"sustained-clock: {dtype}: no window ends within {BURST_S} s of the start "
                     "(one-second windows average the burst away); rerun measure-hopper.py")
        burst, held = max(early), statistics.mean(later)
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
            "# The throughput a Hopper GPU holds through a sustained FP8 GEMM over its burst rate,\n"
            f"# measured: {source} (scripts/device/sustained-clock.py).\n"
            "# include it with  calibration: \"<this file>\"  or --set calibration=<this file>\n"
            "hardware {\n  compute {\n"
            f"    sustained_clock_ratio: {ratio:.3f}\n"
            "  }\n}\n")


def report(directory, write_path=None):
    found = ratios(csv_rows(os.path.join(directory, "sustained.csv")))
    for dtype, (burst, held, ratio) in found.items():
        print(f"{dtype}: burst {burst:.1f} TFLOP/s (best window in the first {BURST_S} s), "
              f"after {SETTLE_S:.0f} s {held:.1f} TFLOP/s: ratio {ratio:.3f}")
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
    """Synthetic output: FP8 at 1,400 TFLOP/s for 0.1 s, then 1,120 (0.8); BF16 at 0.9."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "sustained.csv"), "w") as f:
            f.write("dtype,m,n,k,t_s,calls,tflops\n")
            for t in [0.05 * i for i in range(1, 6)] + list(range(1, 26)):
                f.write(f"fp8,8192,8192,8192,{t:.2f},100,{1400 if t <= 0.1 else 1120}\n")
                f.write(f"bf16,8192,8192,8192,{t:.2f},100,{700 if t <= 0.1 else 630}\n")
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
