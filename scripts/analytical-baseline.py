#!/usr/bin/env python3
"""racksim against a spreadsheet: the closed forms an engineer writes without a simulator, given
the same measurements racksim's A100 terms were fitted on, scored on the same rows.

usage: scripts/analytical-baseline.py [--write | --check]

The closed forms (A100 FP16 peak 312 TFLOP/s; the work per step is Narayanan et al.'s eq. 3,
SC'21: 96 B s l h^2 (1 + s / 6h + V / 16 l h) with the recomputed forward counted, V = 51,200 as in
racksim's vTrain base and Selene's table):
  one utilisation   step = work / (GPUs x peak x eta): one utilisation of the peak (the
                    recomputed forward counted, so a hardware-FLOP utilisation) for every run.
  + bubble          the same times the 1F1B bubble, 1 + (p - 1) / (v m) (m micro-batches per pipeline,
                    v virtual stages), plus a fixed cost per step for runs across nodes, as
                    racksim's calibration (c) has one.
  + collectives     that plus a step's collectives, nothing overlapped (a Calculon-style form):
                    six TP all-reduces a layer of the FP16 activation (inside a node from
                    vTrain's measured nccl-tests tables, across nodes a ring at the NICs of the
                    group's GPUs), two pipeline hand-offs of 1/TP of it a micro-batch at one
                    100 Gb/s NIC, and the FP16 gradients' all-reduce over DP once a step.
Each form is fitted, minimising the mean |relative error|, on the rows racksim's terms were
fitted on for that check: every tenth of vTrain's 1,440 single-node rows (the rows marked
`fitted_on` in scenarios/calibration/a100-single-node-fit.json; without 1.31B when that size is
left out) for the single-node checks; vTrain's 41 multi-node rows, where racksim's step cost was
fitted, for the multi-node checks (the 3.6B rows alone when 18.4B is left out) and for the runs
never fitted (vTrain's 39.1B and 175B, Selene's). racksim's own predictions are read from the
committed reports (the fits' JSON and the *-results.csv files of scripts/accuracy.py); nothing
is simulated, so it takes a second or two.

--write rewrites the README's table between the baseline-table markers; --check exits 1, changing
nothing, when that table differs from what the files give, when racksim's mean |error| is not at
least 2 points under every form's on every check, or when a published step time of Selene's table
is not its paper's work over its rate (which pins the work formula above).
"""
import math, os, sys

from accuracy_files import CAL, ROOT, mape, report, results, with_table
from rank_stats import spearman

README = os.path.join(ROOT, "README.md")
BEGIN = "<!-- baseline-table: scripts/analytical-baseline.py -->"
END = "<!-- /baseline-table -->"
PEAK_FLOPS, VOCAB = 312e12, 51200
GPUS_PER_NODE, NIC_BYTES_PER_S = 8, 12.5e9  # vTrain's and Selene's nodes: 8 A100, 100 Gb/s a GPU
NCCL = "data/measured/vtrain-a100-nccl-allreduce.csv"
SINGLE, MULTI = f"{CAL}/a100-single-node-fit.json", f"{CAL}/a100-kernel-fit.json"
LARGE, SELENE = ("data/measured/vtrain-a100-multi-node-large-results.csv",
                 "data/published/narayanan-sc21-table1-results.csv")
LARGE_LAYOUTS, SELENE_LAYOUTS = ("data/measured/vtrain-a100-multi-node-large.csv",
                                 "data/published/narayanan-sc21-table1.csv")


class Run:
    """One measured run: its work, pipeline and GPUs, racksim's prediction and the measurement."""

    def __init__(self, fields, measured_s, racksim_s, group, seq=2048):
        f = {k: float(v) for k, v in fields.items() if v not in ("", None) and _number(v)}
        seq = f.get("training.seq_length", seq)
        b, l, h = f["training.global_batch_size"], f["model.num_layers"], f["model.hidden_size"]
        tp, pp, dp = f["layout.tp"], f["layout.pp"], f["layout.dp"]
        self.work_flops = 96 * b * seq * l * h * h * (1 + seq / (6 * h) + VOCAB / (16 * l * h))
        self.gpus = tp * pp * dp
        micro_batches = b / (dp * f["training.micro_batch_size"])
        self.bubble = 1 + (pp - 1) / (f.get("layout.virtual_stages", 1) * micro_batches)
        self.comm_s = collectives_s(tp, pp, dp, l, h, seq, f["training.micro_batch_size"],
                                    micro_batches) * self.bubble
        self.across_nodes = self.gpus > 8
        self.measured_s, self.racksim_s, self.group = measured_s, racksim_s, group
        self.datasheet_s = None  # racksim's datasheet preset (a), where the table ran it

    def spreadsheet_s(self, eta, bubble, step_cost_s=0.0, comm=False):
        step = self.work_flops / (self.gpus * PEAK_FLOPS * eta)
        if not bubble:
            return step
        step = step * self.bubble + (step_cost_s if self.across_nodes else 0.0)
        return step + (self.comm_s if comm else 0.0)


def _nccl_table():
    """vTrain's nccl-tests all-reduce times inside one node: {GPUs: [(bytes, seconds)]}."""
    table = {}
    for r in results(NCCL):
        table.setdefault(int(r["gpus"]), []).append(
            (float(r["size_bytes"]), float(r["out_of_place_time_us"]) * 1e-6))
    return {n: sorted(rows) for n, rows in table.items()}


NCCL_TABLE = _nccl_table()


def node_all_reduce_s(gpus, size):
    """An all-reduce inside one node, from the measured table: log-log between its sizes, at the
    end rows' bus bandwidth beyond them."""
    rows = NCCL_TABLE[gpus]
    if size <= rows[0][0]:
        return rows[0][1]
    for (s0, t0), (s1, t1) in zip(rows, rows[1:]):
        if size <= s1:
            x = math.log(size / s0) / math.log(s1 / s0)
            return math.exp(math.log(t0) + x * math.log(t1 / t0))
    return rows[-1][1] * size / rows[-1][0]


def ring_all_reduce_s(ranks, size, per_node):
    """An all-reduce over `ranks` GPUs, `per_node` of them on each node: inside one node from the
    measured table, across nodes a ring at the NICs of the group's GPUs on a node."""
    if ranks <= 1:
        return 0.0
    if ranks <= per_node:
        return node_all_reduce_s(ranks, size)
    return 2 * (ranks - 1) / ranks * size / (NIC_BYTES_PER_S * per_node)


def collectives_s(tp, pp, dp, layers, hidden, seq, micro_batch, micro_batches):
    """A step's collectives with nothing overlapped, per micro-batch of the pipeline's rhythm
    (the caller multiplies by the bubble): six TP all-reduces a layer (forward, recomputed
    forward, backward) of the activation in FP16, and two pipeline hand-offs of 1/TP of it at
    one NIC; plus the gradients' FP16 all-reduce over DP once a step, spread over the
    micro-batches. Ranks laid out TP innermost, then DP, then pipeline stages."""
    tp, pp, dp = int(tp), int(pp), int(dp)
    activation = seq * micro_batch * hidden * 2
    tp_per_node = min(tp, GPUS_PER_NODE)
    tp_s = 6 * layers / pp * ring_all_reduce_s(tp, activation, tp_per_node)
    p2p_s = 2 * activation / tp / NIC_BYTES_PER_S if pp > 1 else 0.0
    params_per_gpu = 12 * layers * hidden * hidden / (tp * pp)
    dp_per_node = max(1, min(dp, GPUS_PER_NODE // tp_per_node))
    dp_s = ring_all_reduce_s(dp, 2 * params_per_gpu, dp_per_node)
    return (tp_s + p2p_s) + dp_s / micro_batches


def _number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def calibrate_runs(path, predicted="fitted_step_time_s"):
    """The rows of a `racksim calibrate --json` report, with the prediction named."""
    runs = []
    for r in report(path)["rows"]:
        fields = dict(o.split("=", 1) for o in r["overrides"])
        fields.setdefault("layout.pp", "1")
        fields.setdefault("layout.dp", "1")
        run = Run(fields, r["measured_step_time_s"], r.get(predicted), r["group"])
        run.fitted_on = r["fitted_on"]
        runs.append(run)
    return runs


def table_runs(layouts, result_rows, measured_key, seq=2048):
    """A validation table's runs: layouts from its data file, times from its results file."""
    by_name = {r["name"]: r for r in results(layouts)}
    runs = []
    for r in results(result_rows):
        fields = dict(by_name[r["name"]])
        group = r["name"].split("-")[1].upper()
        run = Run(fields, float(r[measured_key]), float(r["transfer_step_time_s"]), group, seq)
        run.datasheet_s = float(r["datasheet_step_time_s"])
        runs.append(run)
    return runs


def golden_minimum(loss, lo, hi, steps=200):
    """The minimum of a convex function on [lo, hi]."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    for _ in range(steps):
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        if loss(c) <= loss(d):
            b = d
        else:
            a = c
    return (a + b) / 2


def errors(runs, predict):
    return [100 * (predict(r) / r.measured_s - 1) for r in runs]


def fit(runs, bubble, comm=False):
    """eta (and, with the bubble, the step cost across nodes) minimising the mean |relative
    error|. The loss is convex in 1 / eta for a fixed cost and in the cost for a fixed eta but
    not jointly smooth, so 1 / eta is scanned on a grid, the best cost found at each point, and the
    best point refined."""
    across = bubble and any(r.across_nodes for r in runs)
    loss = lambda u, c: mape(errors(runs, lambda r: r.spreadsheet_s(1 / u, bubble, c, comm)))
    best_cost = lambda u: golden_minimum(lambda c: loss(u, c), 0.0, 10.0, 60) if across else 0.0
    grid = [1.0 + 0.05 * i for i in range(381)]  # eta from 1 down to 0.05
    u = min(grid, key=lambda x: loss(x, best_cost(x)))
    u = golden_minimum(lambda x: loss(x, best_cost(x)), max(1.0, u - 0.05), u + 0.05, 40)
    return 1 / u, best_cost(u)


def spreadsheets(fitted_on):
    """The three closed forms, each fitted on `fitted_on`, as predictors of a run's step."""
    eta_mfu, _ = fit(fitted_on, False)
    eta, cost = fit(fitted_on, True)
    eta_comm, cost_comm = fit(fitted_on, True, comm=True)
    return (lambda r: r.spreadsheet_s(eta_mfu, False),
            lambda r: r.spreadsheet_s(eta, True, cost),
            lambda r: r.spreadsheet_s(eta_comm, True, cost_comm, comm=True)), \
        (eta_mfu, eta, cost, eta_comm, cost_comm)


def min_spearman(runs, predict):
    """The lowest Spearman within a group, and which group (nan when a form ties every run)."""
    groups = sorted({r.group for r in runs})
    values = []
    for g in groups:
        inside = [r for r in runs if r.group == g]
        values.append((spearman([predict(r) for r in inside], [r.measured_s for r in inside]), g))
    defined = [v for v in values if not math.isnan(v[0])]
    if len(defined) < len(values):
        return float("nan"), next(g for v, g in values if math.isnan(v))
    return min(defined)


def check_rows():
    """(what, runs, racksim, and the three closed forms) for each check, and the fitted values: the
    spreadsheets fitted on the rows racksim's terms were fitted on for that check."""
    racksim = lambda r: r.racksim_s
    single = calibrate_runs(SINGLE)
    tenth = [r for r in single if r.fitted_on]
    forms, fitted_single = spreadsheets(tenth)
    checks = [("vTrain single node, the 1,296 rows not fitted (fitted on the other tenth)",
               [r for r in single if not r.fitted_on], racksim, *forms)]
    largest = [r for r in calibrate_runs(SINGLE, "held_out_step_time_s") if r.racksim_s is not None]
    left = {r.group for r in largest}
    forms, _ = spreadsheets([r for r in tenth if r.group not in left])
    checks.append(("vTrain single node, 1.31B left out (fitted on the tenth of the smaller sizes)",
                   largest, racksim, *forms))
    multi = calibrate_runs(MULTI)
    multi_forms, fitted_multi = spreadsheets(multi)
    checks.append(("vTrain multi-node, in sample (fitted on these 41)", multi, racksim,
                   *multi_forms))
    left_out = [r for r in calibrate_runs(MULTI, "held_out_step_time_s") if r.racksim_s is not None]
    left = {r.group for r in left_out}
    forms, _ = spreadsheets([r for r in multi if r.group not in left])
    checks.append(("vTrain multi-node, 18.4B left out (fitted on the 3.6B rows)", left_out,
                   racksim, *forms))
    checks.append(("vTrain 39.1B and 175B on 512 A100 (fitted on the 41 multi-node rows)",
                   table_runs(LARGE_LAYOUTS, LARGE, "measured_step_time_s"), racksim, *multi_forms))
    checks.append(("Narayanan et al. SC'21 Table 1 on Selene, 1.7B-1T (likewise)",
                   table_runs(SELENE_LAYOUTS, SELENE, "published_step_time_s"), racksim,
                   *multi_forms))
    return checks, fitted_single, fitted_multi


def cell(runs, predict, with_rank):
    text = f"{mape(errors(runs, predict)):.1f} %"
    if not with_rank:
        return text
    value, group = min_spearman(runs, predict)
    rank = "ties every run" if math.isnan(value) else f"{value:.2f}"
    return f"{text}; Spearman {rank} ({group})"


def table(checks, single, multi):
    lines = ["| rows | runs | racksim, A100 terms (c) | racksim, datasheet preset (a), nothing "
             "fitted | one utilisation | utilisation + bubble + step cost | the same + collectives |",
             "|---|---|---|---|---|---|---|"]
    for what, runs, racksim, *forms in checks:
        ranked = len({r.group for r in runs}) < len(runs)
        datasheet = "not run"
        if all(r.datasheet_s is not None for r in runs):
            datasheet = cell(runs, lambda r: r.datasheet_s, ranked)
        closed = " | ".join(cell(runs, form, ranked) for form in forms)
        lines.append(f"| {what} | {len(runs):,} | {cell(runs, racksim, ranked)} | {datasheet} | "
                     f"{closed} |")
    lines.append("")
    lines.append(f"Fitted on the single-node tenth: utilisation {single[0]:.3f} of the FP16 peak; "
                 f"with the bubble {single[1]:.3f}; with the collectives too {single[3]:.3f}. On "
                 f"the 41 multi-node rows: {multi[0]:.3f}; with the bubble {multi[1]:.3f} and "
                 f"{multi[2]:.3f} s a step across nodes; with the collectives too {multi[3]:.3f} "
                 f"and {multi[4]:.3f} s. Spearman: the lowest within one model size (which size in "
                 "brackets); a form that gives every run of a size the same time ties them all.")
    return "\n".join(lines)


def published_work_holds():
    """Each Selene row's published step time is eq. 3's work over its published rate."""
    runs = table_runs(SELENE_LAYOUTS, SELENE, "published_step_time_s")
    ok = True
    for run, row in zip(runs, results(SELENE)):
        step = run.work_flops / (run.gpus * float(row["published_tflops_per_gpu"]) * 1e12)
        if abs(step / run.measured_s - 1) > 2e-4:  # the table prints 4 decimals
            print(f"{row['name']}: eq. 3 gives {step:.4f} s, the table {run.measured_s:.4f} s")
            ok = False
    return ok


def racksim_beats_every_form(checks):
    """racksim's mean |error| is under every closed form's on every check, by 2 points at least."""
    ok = True
    for what, runs, racksim, *forms in checks:
        ours = mape(errors(runs, racksim))
        closest = min(mape(errors(runs, form)) for form in forms)
        if ours > closest - 2:
            print(f"{what}: racksim {ours:.1f} %, a closed form {closest:.1f} %")
            ok = False
    return ok


def main(argv):
    checks, single, multi = check_rows()  # the fits, once
    text = table(checks, single, multi)
    if "--write" not in argv and "--check" not in argv:
        print(text)
        return 0
    with open(README) as f:
        readme = f.read()
    updated = with_table(readme, BEGIN, END, text)
    if "--check" in argv:
        same = updated == readme
        if not same:
            print("README's baseline table differs from the files: run scripts/analytical-baseline.py --write")
        return 0 if published_work_holds() & racksim_beats_every_form(checks) & same else 1
    with open(README, "w") as f:
        f.write(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
