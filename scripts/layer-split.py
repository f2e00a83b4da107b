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

--per-micro-batch splits each cost once more, over the series without pipeline stages that
differ only in the global batch (so in the number of micro-batches n each rank runs): a line in
n through their slopes gives a layer's cost per micro-batch and per step (the optimizer and
gradient reduction of its parameters), one through their intercepts the cost outside the layers
per micro-batch (embedding, output layer and loss) and per step. It prints the four, measured and
predicted, per hidden size, TP and micro-batch (a part per step may come out below 0 where the
first micro-batch is cheaper than the others: racksim's first backward writes the gradients
where later ones add to them); --check asserts what docs/validation.md reads in the measured
columns of the committed all-rows fit (ctest runs it).

--pipeline pairs each series without pipeline stages with the series of two stages on the same
GPUs (half the data-parallel size and the global batch, so the same micro-batches per rank n).
Under 1F1B, with every stage recomputing as the first does, a layer costs the one-stage step
2n / (n + 1) times what it costs the two-stage step. If the last stage did not recompute (as
vTrain's own predictor assumes, `src/predictor.py`), it would be 3n / (2n + 1.5): the one stage
then runs three passes a layer, not four, and the two-stage step is n of the first stage's four
passes plus the last stage's three once. It prints the measured and predicted ratios; --check
asserts the measured ones lie nearer 2n / (n + 1) than 3n / (2n + 1.5) and the predicted within
PIPELINE_TOLERANCE of them.

LOG may also be a `racksim calibrate --json` report (all digits of each time). Standard library
only.
"""
import argparse
import collections
import json
import re
import statistics
import sys

ROW = re.compile(r"\s+\d+\s+\S+\s+([\d.eE+-]+)\s+([\d.eE+-]+)\s+[+-][\d.]+%")
SET = re.compile(r"(\S+)=(\S+)")
LAYERS = "model.num_layers"


def read_points(path):
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            rows = json.load(f)["rows"]
        return [(r["measured_step_time_s"], r["fitted_step_time_s"],
                 dict(o.split("=", 1) for o in r["overrides"])) for r in rows
                if any(o.startswith(LAYERS + "=") for o in r["overrides"])]
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


def layer_lines(pts):
    """A series' measured and predicted lines in its layer count: [(slope, intercept)] x 2."""
    layers = [p[0] for p in pts]
    return [line_fit(layers, [p[i] for p in pts]) for i in (1, 2)]


def micro_batches_per_rank(fields):
    return int(fields["training.global_batch_size"]) // (
        int(fields["layout.dp"]) * int(fields["training.micro_batch_size"]))


def split(series, by):
    groups = collections.defaultdict(list)
    for key, pts in series.items():
        fields = dict(key)
        (m_slope, m_icpt), (p_slope, p_icpt) = layer_lines(pts)
        worst = max(abs(p[1] - (m_icpt + m_slope * p[0])) / p[1] for p in pts)
        group = tuple(int(fields.get(field, 0)) for field in by)
        groups[group].append((p_slope / m_slope, p_icpt / m_icpt if m_icpt > 0 else float("nan"),
                              m_icpt / (m_icpt + m_slope * pts[-1][0]), worst))
    return groups


PER_MB_KEY = ("model.hidden_size", "layout.tp", "training.micro_batch_size")


def per_micro_batch(series):
    """{(hidden, TP, micro-batch): [(layer per micro-batch, layer per step, outside per
    micro-batch, outside per step), measured then predicted, seconds]}: series without pipeline
    stages grouped by all but the global batch, each group's slopes and intercepts fitted as a
    line in the micro-batches per rank; one entry per group (data-parallel size)."""
    families = collections.defaultdict(list)
    for key, pts in series.items():
        fields = dict(key)
        if int(fields.get("layout.pp", 1)) != 1:
            continue
        family = tuple(kv for kv in key if kv[0] != "training.global_batch_size")
        families[family].append((micro_batches_per_rank(fields), layer_lines(pts)))
    out = collections.defaultdict(list)
    for family, members in families.items():
        if len({n for n, _ in members}) < 2:
            continue
        fields = dict(family)
        ns = [n for n, _ in members]
        costs = []
        for which in (0, 1):  # measured, predicted
            slope = line_fit(ns, [lines[which][0] for _, lines in members])
            icpt = line_fit(ns, [lines[which][1] for _, lines in members])
            costs.append((slope[0], slope[1], icpt[0], icpt[1]))
        out[tuple(int(fields[f]) for f in PER_MB_KEY)].append(costs)
    return out


def mean_costs(entries, which):
    return [statistics.mean(e[which][i] for e in entries) for i in range(4)]


def print_per_micro_batch(groups):
    print("Measured / predicted, ms; a family's parts are its lines' slopes and intercepts in the "
          "micro-batches per rank, averaged over the families (one per data-parallel size)")
    print("| hidden | TP | micro-batch | families | a layer, per micro-batch | a layer, per step "
          "| outside the layers, per micro-batch | outside, predicted / measured "
          "| outside the layers, per step |")
    print("|---" * 9 + "|")
    for (h, tp, mb), entries in sorted(groups.items()):
        m, p = mean_costs(entries, 0), mean_costs(entries, 1)
        cells = [f"{1e3 * m[i]:.2f} / {1e3 * p[i]:.2f}" for i in range(4)]
        print(f"| {h:,} | {tp} | {mb} | {len(entries)} | {cells[0]} | {cells[1]} | {cells[2]} "
              f"| {p[2] / m[2]:.2f} | {cells[3]} |")


# What docs/validation.md reads in the measured cost outside the layers ("Where a single-node
# step's time goes"): from TP1 to TP2 it falls by more than FALL_TP1_TP2, from TP2 to TP4 by
# less than FALL_TP2_TP4, at micro-batches 2 and 4 of both widths, where an output layer that
# halves with TP would fall by about 2 at both (racksim's adopted predictions: 1.7-1.9).
FALL_TP1_TP2, FALL_TP2_TP4 = 2.5, 1.25


def check_per_micro_batch(path, groups):
    failures = []
    outside = {k: mean_costs(v, 0)[2] for k, v in groups.items()}
    for h in (1024, 2048):
        for mb in (2, 4):
            tp1, tp2, tp4 = (outside.get((h, tp, mb)) for tp in (1, 2, 4))
            if None in (tp1, tp2, tp4):
                failures.append(f"{path}: no families at hidden {h}, micro-batch {mb}")
                continue
            if tp1 / tp2 <= FALL_TP1_TP2 or tp2 / tp4 >= FALL_TP2_TP4:
                failures.append(f"{path}: hidden {h}, micro-batch {mb}: outside the layers falls "
                                f"{tp1 / tp2:.2f}x from TP1 to TP2 and {tp2 / tp4:.2f}x from TP2 "
                                f"to TP4")
    return failures


PIPELINE_TOLERANCE = 0.06


def every_stage_recomputes(n):
    """The one- over two-stage per-layer ratio at n micro-batches per rank under 1F1B."""
    return 2 * n / (n + 1)


def last_stage_does_not(n):
    """The same ratio if the last stage did not recompute (vTrain's predictor's rule)."""
    return 3 * n / (2 * n + 1.5)


def pipeline_pairs(series):
    """[(hidden, TP, micro-batch, n, measured ratio, predicted ratio)]: one-stage over two-stage
    per-layer slopes, for series on the same GPUs that differ only in the pipeline's depth."""
    slopes = {key: tuple(line[0] for line in layer_lines(pts)) for key, pts in series.items()}
    pairs = []
    for key, (m1, p1) in slopes.items():
        fields = dict(key)
        if int(fields.get("layout.pp", 1)) != 1 or int(fields["layout.dp"]) % 2:
            continue
        n = micro_batches_per_rank(fields)
        fields.update({"layout.pp": "2", "layout.dp": str(int(fields["layout.dp"]) // 2),
                       "training.global_batch_size":
                           str(int(fields["training.global_batch_size"]) // 2)})
        two = slopes.get(tuple(sorted(fields.items())))
        if two is None:
            continue
        pairs.append((int(fields["model.hidden_size"]), int(fields["layout.tp"]),
                      int(fields["training.micro_batch_size"]), n, m1 / two[0], p1 / two[1]))
    return sorted(pairs)


def check_pipeline_pairs(path, pairs):
    failures = [] if pairs else [f"{path}: no pairs of one- and two-stage series"]
    for h, tp, mb, n, measured, predicted in pairs:
        every, not_last = every_stage_recomputes(n), last_stage_does_not(n)
        if abs(measured - every) >= abs(measured - not_last):
            failures.append(f"{path}: hidden {h} TP{tp} micro-batch {mb} n {n}: measured "
                            f"{measured:.2f} is nearer 3n/(2n+1.5) {not_last:.2f}")
        if abs(predicted - measured) > PIPELINE_TOLERANCE:
            failures.append(f"{path}: hidden {h} TP{tp} micro-batch {mb} n {n}: predicted "
                            f"{predicted:.2f} against measured {measured:.2f}")
    return failures


def print_pipeline_pairs(pairs):
    print("| hidden | TP | micro-batch | n | measured | predicted | 2n/(n+1) | 3n/(2n+1.5) |")
    print("|---" * 8 + "|")
    for h, tp, mb, n, measured, predicted in pairs:
        print(f"| {h:,} | {tp} | {mb} | {n} | {measured:.2f} | {predicted:.2f} "
              f"| {every_stage_recomputes(n):.2f} | {last_stage_does_not(n):.2f} |")
    worst = max((abs(p[5] - p[4]) for p in pairs), default=0.0)
    print(f"\n{len(pairs)} pairs; predicted against measured: worst {worst:.3f}")


def print_or_check(args, found, print_it, check_it):
    """Prints what one mode found, or with --check exits 1 on any failure of its check."""
    if not args.check:
        print_it(found)
        sys.exit(0)
    failures = check_it(args.log, found)
    for failure in failures:
        print("layer-split: " + failure, file=sys.stderr)
    sys.exit(1 if failures else 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", help="a racksim calibrate log with its per-point table, or its "
                        "--json report")
    parser.add_argument("--by", default="model.hidden_size,layout.tp",
                        help="comma-separated override fields to group the series by")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--per-micro-batch", action="store_true",
                      help="split each cost into its parts per micro-batch and per step")
    mode.add_argument("--pipeline", action="store_true",
                      help="one-stage against two-stage per-layer costs on the same GPUs")
    parser.add_argument("--check", action="store_true",
                        help="with --per-micro-batch: assert the measured TP pattern outside the "
                        "layers; with --pipeline: the ratios (exit 1 if it does not hold)")
    args = parser.parse_args()
    if args.check and not (args.per_micro_batch or args.pipeline):
        parser.error("--check goes with --per-micro-batch or --pipeline")
    by = args.by.split(",")
    series = series_of(read_points(args.log))
    if not series:
        sys.exit(f"{args.log}: no series of rows that differ only in {LAYERS}")
    if args.pipeline:
        print_or_check(args, pipeline_pairs(series), print_pipeline_pairs, check_pipeline_pairs)
    if args.per_micro_batch:
        print_or_check(args, per_micro_batch(series), print_per_micro_batch,
                       check_per_micro_batch)
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
