#!/usr/bin/env python3
"""Split measured and predicted step times into a per-layer cost and a fixed cost.

Reads the per-point table of a `racksim calibrate` log. Rows that differ only in
model.num_layers (same width, layout, batch and GPUs) form a series; a straight line through
each series, measured and predicted, gives the cost of one more layer (the slope) and the cost
of everything else in the step (the intercept: embedding, output layer and loss, what the
optimizer and the gradient reduction spend on them, per-step overheads). Comparing the two
lines says which part of the step a model gets wrong, where the step time alone mixes them.

    scripts/layer-split.py scenarios/calibration/a100-single-node-fit.log.txt

Prints, per (hidden size, TP) group, the median ratio predicted / measured of the slope and of
the intercept, and how straight the measured series are (the largest residual of the line, as
a fraction of the step). --by groups by other override fields instead, e.g.

    scripts/layer-split.py LOG --by model.hidden_size,layout.tp,training.micro_batch_size

Standard library only.
"""
import argparse
import collections
import re
import statistics
import sys

ROW = re.compile(r"\s+\d+\s+\S+\s+([\d.eE+-]+)\s+([\d.eE+-]+)\s+[+-][\d.]+%")
SET = re.compile(r"(\S+)=(\S+)")
LAYERS = "model.num_layers"


def read_points(path):
    points = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line)
            if not m:
                continue
            fields = dict(SET.findall(line))
            if LAYERS not in fields:
                continue
            points.append((float(m.group(1)), float(m.group(2)), fields))
    return points


def line_fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return slope, my - slope * mx


def series_of(points):
    series = collections.defaultdict(list)
    for measured, predicted, fields in points:
        key = tuple(sorted((k, v) for k, v in fields.items() if k != LAYERS))
        series[key].append((int(fields[LAYERS]), measured, predicted))
    return {k: sorted(v) for k, v in series.items() if len({p[0] for p in v}) >= 3}


def split(series, by):
    groups = collections.defaultdict(list)
    for key, pts in series.items():
        fields = dict(key)
        layers = [p[0] for p in pts]
        m_slope, m_icpt = line_fit(layers, [p[1] for p in pts])
        p_slope, p_icpt = line_fit(layers, [p[2] for p in pts])
        worst = max(abs(p[1] - (m_icpt + m_slope * p[0])) / p[1] for p in pts)
        group = tuple(int(fields.get(field, 0)) for field in by)
        groups[group].append((p_slope / m_slope, p_icpt / m_icpt if m_icpt > 0 else float("nan"),
                              m_icpt / (m_icpt + m_slope * max(layers)), worst))
    return groups


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", help="a racksim calibrate log with its per-point table")
    parser.add_argument("--by", default="model.hidden_size,layout.tp",
                        help="comma-separated override fields to group the series by")
    args = parser.parse_args()
    by = args.by.split(",")
    series = series_of(read_points(args.log))
    if not series:
        sys.exit(f"{args.log}: no series of rows that differ only in {LAYERS}")
    groups = split(series, by)
    print("| " + " | ".join(by) + " | series | per-layer cost, predicted / measured | fixed cost, "
          "predicted / measured | fixed share of the measured step (most layers) | "
          "largest residual of the measured line |")
    print("|---" * (len(by) + 5) + "|")
    for group, rows in sorted(groups.items()):
        def spread(i):
            values = [r[i] for r in rows]
            return f"{statistics.median(values):.2f} (range {min(values):.2f}-{max(values):.2f})"

        share = 100 * statistics.median(r[2] for r in rows)
        worst = 100 * max(r[3] for r in rows)
        names = " | ".join(str(g) for g in group)
        print(f"| {names} | {len(rows)} | {spread(0)} | {spread(1)} | {share:.0f} % "
              f"| {worst:.2f} % |")
    allr = [r for rows in groups.values() for r in rows]
    print(f"\n{len(allr)} series: per-layer median {statistics.median(r[0] for r in allr):.2f}, "
          f"fixed median {statistics.median(r[1] for r in allr):.2f}")


if __name__ == "__main__":
    main()
