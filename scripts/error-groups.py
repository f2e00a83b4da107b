#!/usr/bin/env python3
"""Where the A100 all-rows errors sit: each fit's mean |error| split over groups of rows.

Reads the per-row results that `racksim calibrate --json` wrote for the two all-rows checks
(the committed files that scripts/accuracy.py regenerates) and prints, for each group of rows
the validation page names, its rows, mean error, mean |error| and the points of the whole
mean |error| it holds (its rows' |errors| summed over all the rows). Nothing is simulated.

  scripts/error-groups.py              # both tables (docs/validation.md, "6 December, noon")
  scripts/error-groups.py --check      # the groups cover every row once and add up to the
                                       # file's own in-sample mean |error| (ctest runs this)
  scripts/error-groups.py --pairs      # single-node rows whose doubled micro-batch measured
                                       # under half the step: a micro-batch of 2b sequences
                                       # faster than one of b
  scripts/error-groups.py --twins      # single-node rows that differ only in the data-parallel
                                       # size (same micro-batches per rank): the DP variants
                                       # differ by one constant per model, TP, PP and DP pair,
                                       # and what that does to the every-tenth fit's figure
  scripts/error-groups.py --kinds      # the A100 calibration's checked rows by kind of layout,
                                       # as every report gathers them (docs/validation.md,
                                       # "6 December, night"), from data/validation-evidence.json

Groups (the rest is every other row):
- single-node (scenarios/calibration/a100-single-node-all-rows.json, the three terms fitted on
  all 1,440 rows): by hidden size, TP degree, micro-batch and pipeline depth, the five groups
  whose rows miss alike (docs/validation.md);
- multi-node (scenarios/calibration/a100-kernel-fit.json, the step cost fitted on all 41 rows):
  the 3.6B TP8 row at micro-batch 64 (measured twice as slow as micro-batch 32 with no pipeline,
  which no model of kernels and collectives gives), the 18.4B TP2/TP4 layouts with pipeline
  stages across nodes, the 3.6B rows at micro-batch 2 with TP of 4 or more.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SINGLE = "scenarios/calibration/a100-single-node-all-rows.json"
MULTI = "scenarios/calibration/a100-kernel-fit.json"


def rows_of(path):
    """(fields as ints, group, error, measured seconds) per row of a calibrate JSON report."""
    with open(os.path.join(ROOT, path)) as f:
        report = json.load(f)
    out = []
    for row in report["rows"]:
        fields = {}
        for override in row["overrides"]:
            key, value = override.split("=", 1)
            fields[key.rsplit(".", 1)[-1]] = int(float(value))
        out.append((fields, row["group"], row["fitted_error"], row["measured_step_time_s"]))
    return report, out


def single_node_group(f, _group):
    h, tp, mb, pp = f["hidden_size"], f["tp"], f["micro_batch_size"], f["pp"]
    if h == 2048 and tp == 4 and mb <= 2:
        return "hidden 2,048, TP4, micro-batch 1-2"
    if h == 1024 and tp == 2 and mb == 4:
        return "hidden 1,024, TP2, micro-batch 4"
    if h == 2048 and tp == 1 and pp == 1 and mb <= 2:
        return "hidden 2,048, TP1 PP1, micro-batch 1-2"
    if h == 1024 and tp == 1 and mb >= 4:
        return "hidden 1,024, TP1, micro-batch 4-8"
    if h == 1024 and tp == 8 and mb <= 2:
        return "hidden 1,024, TP8, micro-batch 1-2"
    return "the other rows"


def multi_node_group(f, group):
    tp, pp, mb = f["tp"], f["pp"], f["micro_batch_size"]
    if group == "3.6B" and tp == 8 and mb == 64:
        return "3.6B TP8 micro-batch 64 (the floor)"
    if group == "18.4B" and tp in (2, 4) and pp > 1:
        return "18.4B TP2/TP4 with pipeline stages"
    if group == "3.6B" and mb == 2 and tp >= 4:
        return "3.6B micro-batch 2, TP4/TP8/TP16"
    return "the other rows"


def table(path, grouping):
    """The report and its groups, (name, rows, mean, mean |error|, points of the whole), the most
    points first and the other rows last."""
    report, rows = rows_of(path)
    groups = {}
    for fields, group, error, _measured in rows:
        groups.setdefault(grouping(fields, group), []).append(error)
    out = []
    for name, errors in groups.items():
        total_abs = sum(abs(e) for e in errors)
        out.append((name, len(errors), sum(errors) / len(errors), total_abs / len(errors),
                    total_abs / len(rows)))
    out.sort(key=lambda g: (g[0] == "the other rows", -g[4]))
    return report, out


def print_table(title, path, grouping):
    _, groups = table(path, grouping)
    print(f"{title} ({path})")
    print("| rows | n | mean | mean abs. | points of the whole |")
    print("|---|---|---|---|---|")
    for name, n, mean, mape, points in groups:
        print(f"| {name} | {n} | {100 * mean:+.1f} % | {100 * mape:.1f} % | {100 * points:.2f} |")
    print(f"| all | {sum(g[1] for g in groups)} | | | {100 * sum(g[4] for g in groups):.2f} |")
    print()


def fused_softmax(fields, micro_batch):
    """Whether Megatron's fused softmax takes the scores (micro-batch x heads per rank, a
    multiple of 4): where it does at one micro-batch and not at the other, the kernels differ."""
    return (micro_batch * fields["num_heads"] // fields["tp"]) % 4 == 0


def print_pairs():
    """Pairs of single-node rows that differ only in a doubled micro-batch where the larger one's
    step measured under half the smaller's. With half as many micro-batches, each no cheaper
    than before (the same kernels on twice the rows) and the step's own costs unchanged (no
    gradient reduction overlaps the backward in these runs), a step can fall at most to half:
    such a pair forces at least 1 - ratio of mean |error| onto one of its rows in any model of
    that kind, racksim's among them."""
    _, rows = rows_of(SINGLE)
    families = {}
    for fields, _group, _error, measured in rows:
        key = tuple(sorted((k, v) for k, v in fields.items() if k != "micro_batch_size"))
        families.setdefault(key, {})[fields["micro_batch_size"]] = measured
    pairs, broken, by_group = 0, [], {}
    for key, by_mb in families.items():
        fields = dict(key)
        for b in sorted(by_mb):
            if 2 * b not in by_mb or fused_softmax(fields, b) != fused_softmax(fields, 2 * b):
                continue
            pairs += 1
            ratio = by_mb[2 * b] / (by_mb[b] / 2)
            if ratio < 1:
                broken.append((ratio, key, b))
                name = f"hidden {fields['hidden_size']:,}, TP{fields['tp']}, micro-batch {b} -> {2 * b}"
                by_group.setdefault(name, []).append(ratio - 1)
    # Each pair's shortfall is forced onto one of its two rows; pairs that share a row are
    # counted once (the larger shortfall), so the sum stays a bound.
    forced, used = 0.0, set()
    for ratio, key, b in sorted(broken):
        if (key, b) not in used and (key, 2 * b) not in used:
            forced += 1 - ratio
            used.update({(key, b), (key, 2 * b)})
    print(f"Single-node pairs with a doubled micro-batch and the same kernels: {pairs}; "
          f"measured under half the step: {len(broken)}")
    print("| pair | n | mean | worst |")
    print("|---|---|---|---|")
    for name, shortfalls in sorted(by_group.items(), key=lambda g: min(g[1])):
        print(f"| {name} | {len(shortfalls)} | {100 * sum(shortfalls) / len(shortfalls):+.1f} % "
              f"| {100 * min(shortfalls):+.1f} % |")
    print(f"forced onto the 1,440 rows' mean |error|: at least {100 * forced / len(rows):.2f} points")


EVIDENCE = "data/validation-evidence.json"
CALIBRATION = "a100-kernel-calibration.textproto"
# The kinds in racksim's order of tensor parallelism, then pipeline (analysis/validation_evidence.h).
TP_KINDS = ["no TP", "TP smaller than a scale-up domain", "TP a whole scale-up domain",
            "TP across scale-up domains"]
PP_KINDS = ["no pipeline", "pipeline stages inside one scale-up domain",
            "pipeline stages across scale-up domains"]


def layout_kind(layout):
    """racksim's layout_kind (analysis/validation_evidence.cpp) of one evidence layout: where its
    TP and pipeline traffic runs against its cluster's scale-up domain.
    ValidationEvidence.TheA100CalibrationShowsWhereItsLayoutKindMisses pins the C++ side's count
    for one kind, which --check compares with this one's."""
    tp, pp, domain = layout["tp"], layout["pp"], layout["scale_up_domain_gpus"]
    gpus = layout["nodes"] * layout["gpus_per_node"]
    tensor = 0 if tp <= 1 else 1 if tp < domain else 2 if tp == domain else 3
    pipeline = 0 if pp <= 1 else 1 if gpus <= domain else 2
    return tensor, pipeline


def kinds_table():
    """The A100 calibration's checked rows per kind of layout: {kind: (rows, MAPE, mean)}, the
    MAPE and mean weighted by rows as racksim adds them."""
    with open(os.path.join(ROOT, EVIDENCE)) as f:
        evidence = json.load(f)
    config = next(c for c in evidence["configurations"] if c["calibration"] == CALIBRATION)
    sums = {}
    for check in config["checks"]:
        for layout in check["layouts"]:
            s = sums.setdefault(layout_kind(layout), [0, 0.0, 0.0])
            s[0] += layout["rows"]
            s[1] += layout["rows"] * layout["mape_percent"]
            s[2] += layout["rows"] * layout["mean_error_percent"]
    return config, {k: (n, a / n, m / n) for k, (n, a, m) in sorted(sums.items())}


def print_kinds():
    _, kinds = kinds_table()
    print(f"The A100 calibration's checked rows by kind of layout ({EVIDENCE})")
    print("| kind of layout | rows | MAPE | mean |")
    print("|---|---|---|---|")
    for (tensor, pipeline), (n, mape_percent, mean) in kinds.items():
        print(f"| {TP_KINDS[tensor]}, {PP_KINDS[pipeline]} | {n} | {mape_percent:.1f} % "
              f"| {mean:+.1f} % |")


def check_kinds():
    """The kinds cover every checked row once, and the worst kind holds the 35 rows the C++ test
    pins."""
    config, kinds = kinds_table()
    failures = []
    rows = sum(n for n, _, _ in kinds.values())
    checked = sum(c["rows"] for c in config["checks"])
    if rows != checked:
        failures.append(f"{EVIDENCE}: the kinds hold {rows} rows, the checks {checked}")
    if kinds.get((1, 2), (0,))[0] != 35:
        failures.append(f"{EVIDENCE}: TP smaller than a server with pipeline stages across servers "
                        f"holds {kinds.get((1, 2), (0,))[0]} rows, the C++ test pins 35")
    return failures


FIT_EVERY_TENTH = "scenarios/calibration/a100-single-node-fit.json"
# The largest spread, in seconds, of one DP pair's offset across its configurations that still
# counts as one constant (the CSV's times have 6 decimals of a millisecond).
TWIN_TOLERANCE_S = 1e-8


def twins():
    """Single-node rows grouped by all but the data-parallel size, with the same micro-batches
    per rank: ({base: {dp: (line, measured s)}}, {(model, TP, PP, dp, next dp): [offsets, s]})."""
    report, rows = rows_of(SINGLE)
    bases = {}
    for row, (fields, _group, _error, measured) in zip(report["rows"], rows):
        dp, mb = fields["dp"], fields["micro_batch_size"]
        key = tuple(sorted((k, v) for k, v in fields.items()
                           if k not in ("dp", "global_batch_size", "gpus_per_node")))
        key += (("micro_batches", fields["global_batch_size"] // (dp * mb)),)
        bases.setdefault(key, {})[dp] = (row["line"], measured)
    offsets = {}
    for key, by_dp in bases.items():
        fields = dict(key)
        dps = sorted(by_dp)
        for a, b in zip(dps, dps[1:]):
            name = (fields["hidden_size"], fields["num_layers"], fields["tp"], fields["pp"], a, b)
            offsets.setdefault(name, []).append(by_dp[b][1] - by_dp[a][1])
    return bases, offsets


def leak_split(bases, error_of, seen_by):
    """Over every row with an error (error_of(line) is not None): (n, mean |error|) of the rows
    none of whose DP twins seen_by(line, twin) says the fit saw, and of the others."""
    split = {False: [], True: []}
    for by_dp in bases.values():
        lines = [line for line, _ in by_dp.values()]
        for line in lines:
            error = error_of(line)
            if error is None:
                continue
            seen = any(seen_by(line, other) for other in lines if other != line)
            split[seen].append(abs(error))
    return {k: (len(v), sum(v) / len(v) if v else 0) for k, v in split.items()}


def twin_leak(bases):
    """The every-tenth fit's rows not fitted: (n, mean |error|) of those with no DP twin fitted,
    and of those with one."""
    with open(os.path.join(ROOT, FIT_EVERY_TENTH)) as f:
        rows = {r["line"]: r for r in json.load(f)["rows"]}
    return leak_split(bases,
                      lambda line: None if rows[line]["fitted_on"] else rows[line]["fitted_error"],
                      lambda _line, twin: rows[twin]["fitted_on"])


KFOLD = "scenarios/calibration/a100-single-node-kfold.json"


def kfold_twin_leak(bases, folds=5, fit_every=10):
    """The 5-fold's held-out rows (contiguous folds in file order, each fitted on every tenth
    row outside it): (n, mean |error|) of those whose DP twin no fold's fit saw, and of those
    whose twin the fit that predicted them saw."""
    with open(os.path.join(ROOT, KFOLD)) as f:
        rows = json.load(f)["rows"]
    index = {r["line"]: i for i, r in enumerate(rows)}
    fold = lambda line: index[line] * folds // len(rows)
    return leak_split(bases, lambda line: rows[index[line]].get("held_out_error"),
                      lambda line, twin: index[twin] % fit_every == 0 and fold(twin) != fold(line))


def print_twins():
    bases, offsets = twins()
    spread = max(max(o) - min(o) for o in offsets.values())
    negative = sum(1 for o in offsets.values() if o[0] < 0)
    rows = sum(len(b) for b in bases.values())
    print(f"Single-node rows: {rows} in {len(bases)} configurations that differ only in the DP size")
    print(f"DP pairs (model, TP, PP, DP -> next DP): {len(offsets)}; the step differs by one constant "
          f"per pair, the same over every micro-batch and micro-batch count to {spread:.1e} s; "
          f"{negative} of the constants are negative (the larger DP group faster)")
    leak = twin_leak(bases)
    print(f"Every-tenth fit ({FIT_EVERY_TENTH}), rows not fitted: {leak[False][0]} with no DP twin "
          f"fitted, {100 * leak[False][1]:.2f} %; {leak[True][0]} with a twin fitted, "
          f"{100 * leak[True][1]:.2f} %")
    leak = kfold_twin_leak(bases)
    print(f"5-fold ({KFOLD}), held-out rows: {leak[False][0]} whose DP twin the predicting fit did "
          f"not see, {100 * leak[False][1]:.2f} %; {leak[True][0]} whose twin it saw, "
          f"{100 * leak[True][1]:.2f} %")


def check_twins():
    """The DP variants differ by one constant per DP pair (docs/validation.md states it)."""
    _, offsets = twins()
    return [f"{SINGLE}: the DP pair {name} differs by {min(o):.9f} to {max(o):.9f} s, not one "
            f"constant" for name, o in offsets.items() if max(o) - min(o) > TWIN_TOLERANCE_S]


def check():
    failures = check_kinds() + check_twins()
    for path, grouping in ((SINGLE, single_node_group), (MULTI, multi_node_group)):
        report, groups = table(path, grouping)
        total = sum(g[4] for g in groups)
        stated = report["errors"]["in_sample"]["mean_abs_relative"]
        rows = sum(g[1] for g in groups)
        if rows != report["points"]:
            failures.append(f"{path}: the groups hold {rows} rows, the report {report['points']}")
        if abs(total - stated) > 1e-9:
            failures.append(f"{path}: the groups add up to {total:.6f}, the report says {stated:.6f}")
        if len(groups) < 2:
            failures.append(f"{path}: no group but the rest (the fields changed?)")
    for failure in failures:
        print("error-groups: " + failure, file=sys.stderr)
    return 1 if failures else 0


def main(argv):
    if "--check" in argv:
        return check()
    if "--pairs" in argv:
        print_pairs()
        return 0
    if "--kinds" in argv:
        print_kinds()
        return 0
    if "--twins" in argv:
        print_twins()
        return 0
    print_table("Single-node rows, the three terms fitted on all of them", SINGLE, single_node_group)
    print_table("Multi-node rows, the step cost fitted on all of them", MULTI, multi_node_group)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
