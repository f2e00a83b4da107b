#!/usr/bin/env python3
"""Simulates every row of a published-throughput table and compares racksim with the paper.

usage: scripts/validate.py RACKSIM [--jobs N] [--table NAME] [--only NAME,...]
                           [--config NAME,...] [--set PATH=VALUE ...]

Tables (--table): narayanan-sc21-table1 (default; data/published/narayanan-sc21-table1.csv on
scenarios/validation/megatron-gpt-a100.textproto), megatron-bridge-h100
(data/published/megatron-bridge-h100.csv on scenarios/validation/megatron-bridge-llama3-h100.textproto),
megatron-bridge-blackwell (data/published/megatron-bridge-blackwell.csv on the same base, each row
on its own Blackwell preset), megatron-bridge-gpt-oss (data/published/megatron-bridge-gpt-oss.csv
on scenarios/validation/megatron-bridge-gpt-oss.textproto: an MoE in BF16 on five systems),
megatron-bridge-moe (data/published/megatron-bridge-moe.csv on
scenarios/validation/megatron-bridge-moe.textproto: Qwen3-235B-A22B, Qwen3-30B-A3B and
DeepSeek-V3 from the same pages, BF16 on NVL72 and FP8 on H100),
nemo-24.07-h100 (data/published/nemo-24.07-h100.csv on scenarios/validation/nemo-h100.textproto),
nemo-docs-24.12-h100 (the same rows and layouts, the figures of the NeMo Framework 24.12 user
guide's page, data/published/nemo-docs-24.12-h100.csv),
megatron-moe-modelzoo (data/published/megatron-moe-modelzoo.csv on
scenarios/validation/megatron-moe-modelzoo.textproto: NVIDIA's MoE team's Qwen3 runs in BF16 with
the routing forced to balance, from its Megatron-MoE-ModelZoo and Megatron-LM's MoE recipes,
TFLOP/s by Megatron-Core's count),
deepseek-v3-h800 (data/published/deepseek-v3-h800.csv on
scenarios/validation/deepseek-v3-h800.textproto) and vtrain-a100-large (vTrain's measured 39.1B
and 175B runs on 512 A100, data/measured/vtrain-a100-multi-node-large.csv, on
scenarios/calibration/a100-vtrain-kernel-base.textproto: larger than anything the A100 terms were
fitted on), llm-foundry-mpt-a100 (MosaicML's MPT benchmarks on A100 80GB in BF16 with FSDP,
data/published/llm-foundry-mpt-a100.csv on scenarios/validation/llm-foundry-mpt-a100.textproto;
its `fa1` configurations run attention at half the preset's FlashAttention-2 rate, as those
runs' FlashAttention 1.x kernel did), torchtitan-a100 (torchtitan's Llama 2 and Llama 3 runs on 64
A100 80GB with FSDP2, data/published/torchtitan-a100.csv on
scenarios/validation/torchtitan-a100.textproto: full, every-other-layer, op-level and no activation
checkpointing).
Columns with a dot are scenario overrides. `measured_step_time_ms` is a measured step time;
`published_tokens_per_s_per_gpu` compares step times
directly (global batch x sequence / (GPUs x tokens/s per GPU)); `published_tflops_per_gpu` is the
paper's achieved TFLOP/s per GPU, and the paper's FLOPs per step (its eq. 3, recompute included)
turn both into step times:

    F = 96 B s l h^2 (1 + s / (6 h) + V / (16 l h))
    published step = F / (GPUs x published TFLOP/s);  predicted TFLOP/s = F / (GPUs x step)

Every row is simulated under each configuration of the table (--config picks some):
  datasheet  the base scenario as it is: datasheet preset, nothing fitted (vTrain's base turns
             the dgx-a100 preset's held rate off for its fits; this column turns it back on);
  transfer   the same with a calibration fitted on other measurements (for the A100 tables:
             vTrain's single-node rows and 3.6B and 18.4B runs, scenarios/calibration/
             a100-kernel-calibration.textproto; another cluster than Selene's, the same as the
             39.1B and 175B rows'), applied unchanged: fit on small, predict large;
  burst      the same preset with its FLOP-bound kernels at the rates its benchmarks measured
             (hardware.compute.sustained_clock_ratio=1), not at the throughput a GPU holds at
             its power limit, which the Hopper, A100 and Blackwell presets give (0.862,
             measured on an H200, not fitted; the A100 and Blackwell presets borrow it).

Writes data/published/<table>-results.csv (vtrain-a100-large: data/measured/
vtrain-a100-multi-node-large-results.csv; not with --only or --config, which print a
partial table) and prints the markdown table with the errors
(predicted / published step time - 1; per configuration the MAPE over the rows, the largest
miss and how many rows are within 10%; where the rows have a `group` column, the same per group
with Spearman's rank correlation between predicted and published step times).
"""
import csv, functools, json, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

from csv_rows import csv_rows
from rank_stats import spearman
from racksim_step import step_time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# The configurations' overrides: the A100 terms fitted on vTrain's runs, and the presets' kernels
# at their benchmarks' burst rates instead of the rates held at the power limit.
A100_TRANSFER = ["--set", "calibration=scenarios/calibration/a100-kernel-calibration.textproto"]
BURST = ["--set", "hardware.compute.sustained_clock_ratio=1"]
# vTrain's base turns the dgx-a100 preset's held rate off for its fits; its datasheet column
# turns it back on at the value the preset holds, which `racksim presets --json` gives at run time.
A100_PRESET_HELD = lambda racksim: preset_clock_ratio(racksim, "dgx-a100")
# FlashAttention 1.x at half of FlashAttention-2's rate, the one racksim's flash attention has:
# "FlashAttention-2 is about 2x faster than its previous version" (Dao, arXiv 2307.08691).
A100_FA1 = lambda racksim: ["--set", "hardware.compute.attention="
                            f"{preset_compute(racksim, 'dgx-a100', 'attention') / 2:g}"]
# The datasheet preset as it is and at its benchmarks' burst rates: the configurations of every
# table that has no fitted terms to transfer.
PRESET_CONFIGS = {"datasheet": [], "burst": BURST}
NEMO_H100 = {
    "base": "scenarios/validation/nemo-h100.textproto",
    "seq": None,  # per row: training.seq_length
    "configs": PRESET_CONFIGS,
}
TABLES = {
    "narayanan-sc21-table1": {
        "base": "scenarios/validation/megatron-gpt-a100.textproto",
        "seq": 2048,
        "configs": {
            "datasheet": [],
            "burst": BURST,
            "transfer": A100_TRANSFER,
        },
    },
    "megatron-bridge-h100": {
        "base": "scenarios/validation/megatron-bridge-llama3-h100.textproto",
        "seq": 8192,
        "configs": PRESET_CONFIGS,
    },
    # The same base on Blackwell: each row names its hardware preset.
    "megatron-bridge-blackwell": {
        "base": "scenarios/validation/megatron-bridge-llama3-h100.textproto",
        "seq": 8192,
        "configs": PRESET_CONFIGS,
    },
    "megatron-bridge-gpt-oss": {
        "base": "scenarios/validation/megatron-bridge-gpt-oss.textproto",
        "seq": None,  # per row: training.seq_length
        "configs": PRESET_CONFIGS,
    },
    # Qwen3-235B, Qwen3-30B and DeepSeek-V3 from the same pages: each row names its model too.
    "megatron-bridge-moe": {
        "base": "scenarios/validation/megatron-bridge-moe.textproto",
        "seq": None,  # per row: training.seq_length
        "configs": PRESET_CONFIGS,
    },
    "nemo-24.07-h100": NEMO_H100,
    # The same rows as nemo-24.07-h100, the figures of a later release's page: each row's
    # layout and model come from the 24.07 file, matched by name.
    "nemo-docs-24.12-h100": {**NEMO_H100, "layouts": "data/published/nemo-24.07-h100.csv"},
    # NVIDIA's MoE team's Qwen3 runs (Megatron-MoE-ModelZoo, Megatron-LM's MoE recipes): TFLOP/s
    # per GPU by Megatron-Core's own count (megatron_core_flops).
    "megatron-moe-modelzoo": {
        "base": "scenarios/validation/megatron-moe-modelzoo.textproto",
        "seq": None,  # per row: training.seq_length
        "configs": PRESET_CONFIGS,
        "flops": "megatron-core",
    },
    "deepseek-v3-h800": {
        "base": "scenarios/validation/deepseek-v3-h800.textproto",
        "seq": 4096,
        "configs": PRESET_CONFIGS,
    },
    "llm-foundry-mpt-a100": {
        "base": "scenarios/validation/llm-foundry-mpt-a100.textproto",
        "seq": None,  # per row: training.seq_length
        "configs": {
            "datasheet": [],
            "burst": BURST,
            "transfer": A100_TRANSFER,
            "datasheet_fa1": A100_FA1,
            "transfer_fa1": lambda racksim: A100_TRANSFER + A100_FA1(racksim),
        },
    },
    # torchtitan's FSDP2 runs: each row sets its model and its activation checkpointing.
    "torchtitan-a100": {
        "base": "scenarios/validation/torchtitan-a100.textproto",
        "seq": None,  # per row: training.seq_length
        "configs": {"datasheet": [], "burst": BURST, "transfer": A100_TRANSFER},
    },
    "vtrain-a100-large": {
        "base": "scenarios/calibration/a100-vtrain-kernel-base.textproto",
        "data": "data/measured/vtrain-a100-multi-node-large.csv",
        "results": "data/measured/vtrain-a100-multi-node-large-results.csv",
        "seq": 2048,
        "configs": {
            "datasheet": A100_PRESET_HELD,
            "burst": BURST,
            "transfer": A100_TRANSFER,
        },
    },
}
VOCAB, GPUS_PER_NODE = 51200, 8


def published(row, gpus, seq, flops_of=None):
    """The published step time, the work per step its rate counts (tokens or TFLOPs) and that
    rate per GPU: as the row prints it where it gives one, else back from a measured step.

    A row's own `training.seq_length` takes the place of the table's sequence length; a TFLOP/s
    figure counts the FLOPs `flops_of(row, seq)` gives (the SC'21 paper's by default)."""
    seq = int(row.get("training.seq_length") or seq)
    tokens = float(row["training.global_batch_size"]) * seq
    if "measured_step_time_ms" in row:
        step = float(row["measured_step_time_ms"]) / 1e3
        return step, tokens, tokens / (gpus * step)
    if "published_tokens_per_s_per_gpu" in row:
        rate = float(row["published_tokens_per_s_per_gpu"])
        return tokens / (gpus * rate), tokens, rate
    flops = (flops_of or paper_flops)(row, seq)
    rate = float(row["published_tflops_per_gpu"])
    return flops / (gpus * rate * 1e12), flops / 1e12, rate


def paper_flops(row, seq):
    b = float(row["training.global_batch_size"])
    l = float(row["model.num_layers"])
    h = float(row["model.hidden_size"])
    return 96 * b * seq * l * h * h * (1 + seq / (6 * h) + VOCAB / (16 * l * h))


def megatron_core_flops(racksim, row, seq):
    """The model FLOPs per step Megatron-Core logs its TFLOP/s from (num_floating_point_operations
    in megatron/training/training.py, NVIDIA/Megatron-LM, BSD-3-Clause; the same in
    Megatron-Bridge): per sequence 12 s L h^2 [(1 + g/a + s/(2h)) q/h + 3/2 k f/h] + 6 s h V for a
    model whose every layer is an MoE of SwiGLU experts (q = a x head_dim, the query projection;
    f the expert width; causal attention counted half; no router, norms or recompute). V is the
    vocabulary as Megatron pads it; the Qwen3 vocabulary needs no padding at these TP sizes."""
    m = presets_json(racksim)["models"][row["model.preset"]]
    if m.get("activation") != "SWIGLU" or m.get("num_shared_experts") or m.get("first_dense_layers"):
        sys.exit(f"validate.py: {row['name']}: megatron_core_flops covers only all-MoE SwiGLU models")
    h, L, a = float(m["hidden_size"]), float(m["num_layers"]), float(m["num_heads"])
    q, g = a * float(m["head_dim"]), float(m["num_kv_heads"])
    experts = float(m["experts_per_token"]) * float(m["moe_ffn_hidden_size"])
    attention = (1 + g / a + seq / (2 * h)) * q / h
    per_sequence = (12 * seq * L * h * h * (attention + 1.5 * experts / h) +
                    6 * seq * h * float(m["vocab_size"]))
    return float(row["training.global_batch_size"]) * per_sequence


FLOPS = {"megatron-core": megatron_core_flops}


def with_layouts(points, layouts):
    """Rows that give only a figure take their layout and model from another table's row of the
    same name; the figure is theirs."""
    if layouts is None:
        return points
    by_name = {r["name"]: r for r in csv_rows(os.path.join(ROOT, layouts))}
    missing = [p["name"] for p in points if p["name"] not in by_name]
    if missing:
        sys.exit(f"validate.py: {layouts} has no row named {', '.join(missing)}")
    return [{**{k: v for k, v in by_name[p["name"]].items() if "." in k}, **p} for p in points]


@functools.lru_cache(maxsize=None)
def presets_json(racksim):
    """`racksim presets --json`, read once per run (several configurations look values up)."""
    listing = subprocess.run([racksim, "presets", "--json"], capture_output=True, text=True,
                             check=True)
    return json.loads(listing.stdout)


def preset_compute(racksim, preset, field):
    """A hardware preset's hardware.compute field, as `racksim presets --json` gives it."""
    compute = presets_json(racksim)["hardware"][preset].get("compute", {})
    if field not in compute:
        sys.exit(f"validate.py: `racksim presets --json` gives {preset} no compute.{field}")
    return compute[field]


def preset_clock_ratio(racksim, preset):
    """The sustained_clock_ratio a hardware preset holds, as an override."""
    ratio = preset_compute(racksim, preset, "sustained_clock_ratio")
    return ["--set", f"hardware.compute.sustained_clock_ratio={ratio}"]


def resolve_config(racksim, overrides):
    """A configuration's overrides: a list, or a function of racksim that looks them up."""
    return overrides(racksim) if callable(overrides) else overrides


def simulate(racksim, base, row, extra):
    """A row's step time: its dotted columns are scenario overrides."""
    step, why = step_time(racksim, base, {k: v for k, v in row.items() if "." in k}, extra,
                          cwd=ROOT)
    return step, None if why is None else [why]


def parse_args(argv):
    opts = {"jobs": 1, "table": "narayanan-sc21-table1", "only": None, "config": None}
    args = argv
    while args[:1] in (["--jobs"], ["--table"], ["--only"], ["--config"]):
        key, value = args[0][2:], args[1]
        opts[key] = int(value) if key == "jobs" else value
        args = args[2:]
    return opts, args


def summary(name, errors, total):
    if not errors:
        return f"{name}: no row simulated"
    mape = 100 * sum(e for e, _ in errors) / len(errors)
    worst = max(errors)
    within = sum(1 for e, _ in errors if e <= 0.10)
    return (f"{name}: rows {len(errors)} of {total}: MAPE {mape:.1f}%, worst "
            f"{100 * worst[0]:.1f}% ({worst[1]}), within 10%: {within}")


def group_summaries(name, steps):
    """Per group: MAPE, bias and Spearman of (group, published, predicted, row) tuples."""
    lines = []
    for group in dict.fromkeys(g for g, _, _, _ in steps):
        rows = [(pub, pred, row) for g, pub, pred, row in steps if g == group]
        errors = [(abs(pred / pub - 1), row) for pub, pred, row in rows]
        bias = 100 * sum(pred / pub - 1 for pub, pred, _ in rows) / len(rows)
        rho = spearman([pub for pub, _, _ in rows], [pred for _, pred, _ in rows])
        lines.append(f"  {summary(f'{name} {group}', errors, len(rows))}, "
                     f"mean error {bias:+.1f}%, Spearman {rho:+.3f}")
    return lines


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) >= 2 else 2)
    racksim = os.path.abspath(sys.argv[1])
    if not os.access(racksim, os.X_OK):
        sys.exit(f"validate.py: {sys.argv[1]}: not an executable racksim (usage: see --help)")
    opts, extra = parse_args(sys.argv[2:])
    table = TABLES[opts["table"]]
    configs = {k: resolve_config(racksim, v) for k, v in table["configs"].items()
               if not opts["config"] or k in opts["config"].split(",")}
    data = table.get("data", os.path.join("data", "published", opts["table"] + ".csv"))
    points = with_layouts(csv_rows(os.path.join(ROOT, data)), table.get("layouts"))
    if opts["only"]:
        points = [p for p in points if p["name"] in opts["only"].split(",")]
    jobs = [(p, c) for p in points for c in configs]
    with ThreadPoolExecutor(opts["jobs"]) as pool:
        sims = list(pool.map(
            lambda j: simulate(racksim, table["base"], j[0], configs[j[1]] + extra), jobs))
    sim = {(p["name"], c): s for (p, c), s in zip(jobs, sims)}

    measured = bool(points) and "measured_step_time_ms" in points[0]
    unit = "TFLOP/s" if points and "published_tflops_per_gpu" in points[0] else "tokens/s"
    source = "measured" if measured else "published"
    head = ["model", "GPUs", "TP", "PP", "CP", "DP", "v", "mb", "batch", f"{source} {unit}",
            f"{source} step (s)"]
    for c in configs:
        head += [f"{c} {unit}", f"{c} step (s)", f"{c} error"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    errors = {c: [] for c in configs}
    steps = {c: [] for c in configs}
    out_rows = []
    for p in points:
        per_node = int(p.get("hardware.gpus_per_node") or GPUS_PER_NODE)  # NVL72: 4-GPU trays
        gpus = int(p["hardware.nodes"]) * per_node
        flops_of = (functools.partial(FLOPS[table["flops"]], racksim) if "flops" in table
                    else None)
        published_step, work, published_rate = published(p, gpus, table["seq"], flops_of)
        cells = [p["name"], gpus, p["layout.tp"], p["layout.pp"], p.get("layout.cp", "1"),
                 p["layout.dp"], p.get("layout.virtual_stages", ""),
                 p.get("training.micro_batch_size", "1"), p["training.global_batch_size"],
                 f"{published_rate:.0f}", f"{published_step:.2f}"]
        rate_key = f"{source}_tokens_per_s_per_gpu" if unit == "tokens/s" else "published_tflops_per_gpu"
        record = {"name": p["name"], "gpus": gpus, rate_key: published_rate,
                  f"{source}_step_time_s": f"{published_step:.4f}"}
        for c in configs:
            step, err = sim[(p["name"], c)]
            if step is None:
                cells += [f"not simulated: {err[0]}", "", ""]
                record[f"{c}_error_percent"] = f"not simulated: {err[0]}"
                continue
            error = step / published_step - 1
            errors[c].append((abs(error), p["name"]))
            if "group" in p:
                steps[c].append((p["group"], published_step, step, p["name"]))
            cells += [f"{work / (gpus * step):.1f}", f"{step:.2f}", f"{100 * error:+.1f}%"]
            record[f"{c}_step_time_s"] = f"{step:.4f}"
            record[f"{c}_error_percent"] = f"{100 * error:+.2f}"
        print("| " + " | ".join(map(str, cells)) + " |")
        out_rows.append(record)
    print()
    for c in configs:
        print(summary(c, errors[c], len(points)))
        for line in group_summaries(c, steps[c]):
            print(line)
    if opts["only"] or opts["config"]:
        # A partial table must not replace the whole one the docs quote.
        print("(--only/--config: the results file is left as it was)")
        return
    fields = list(dict.fromkeys(k for r in out_rows for k in r))
    results = table.get("results", os.path.join("data", "published", opts["table"] + "-results.csv"))
    with open(os.path.join(ROOT, results), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields or ["name"])
        writer.writeheader()
        writer.writerows(out_rows)


if __name__ == "__main__":
    main()
