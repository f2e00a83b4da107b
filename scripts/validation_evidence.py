"""data/validation-evidence.json, which racksim compiles in and prints with every training step
("How far to trust it"): per hardware preset, calibration file, clock ratio, training dtype and
model kind (dense or MoE), the rows of the README's accuracy table that check it, and each
check's runs (its rows grouped by model and GPU count), from the same results files as the
table. scripts/accuracy.py writes
it with the table; --check compares it."""
import json, os, re, sys

from accuracy_files import ROOT, errors_of, json_of, mape, model_label, report, results, worst

# What `racksim run` prints under "How far to trust it": each configuration's rows of the table.
EVIDENCE = "data/validation-evidence.json"
# The held rate the Hopper, A100 and Blackwell presets carry (topologies/hardware_presets.cpp;
# the test ValidationEvidence.HeldRatiosAreThePresetsOwn checks it against the presets) and the
# burst rate (1); the A100 calibration file sets 1 itself.
HELD, BURST_RATIO = 0.862, 1.0
# The two configurations of a table without fitted terms: its datasheet column at the held rate,
# its burst column at 1.
HELD_AND_BURST = ((HELD, "datasheet"), (BURST_RATIO, "burst"))
# A row's node and NVLink domain unless it says otherwise (its hardware.gpus_per_node and
# hardware.scale_up.domain_size columns: the NVL72 rows' 4-GPU trays in 72-GPU domains): 8-GPU
# servers, each one NVLink domain (DGX/HGX A100, H100, H800, B200; vTrain's nodes); vTrain's
# single-node rows set how many of a server's GPUs they use.
GPUS_PER_NODE = SCALE_UP_DOMAIN_GPUS = 8


def size_b(label):
    """The model size a run's label names, in billions of parameters: 'GPT-3 175B' -> 175.0,
    'MPT 760M' -> 0.76."""
    m = re.search(r"(\d+(?:\.\d+)?)([BM])\b", label)
    if not m:
        sys.exit(f"accuracy: no model size (like 175B or 760M) in the run label '{label}'")
    return float(m.group(1)) / (1000 if m.group(2) == "M" else 1)


def grouped(labelled):
    """A check's rows grouped by model, GPU count and `extra` (a tuple, () for none), smallest
    model first: [(label, gpus, extra, error in per cent)] -> [((size, gpus, extra, label),
    errors)]."""
    groups = {}
    for label, gpus, extra, error in labelled:
        groups.setdefault((size_b(label), int(gpus), extra, label), []).append(error)
    return sorted(groups.items())


def error_figures(errors):
    """A group's rows, MAPE and mean signed error (per cent)."""
    return {"rows": len(errors), "mape_percent": round(mape(errors), 2),
            "mean_error_percent": round(sum(errors) / len(errors), 2)}


def checked_runs(labelled):
    """The runs of one check, for racksim to name the one nearest a scenario: the rows grouped
    by model and GPU count, [(label, gpus, error in per cent)] -> their size, rows, MAPE and
    mean signed error, smallest model first."""
    return [{"run": label, "parameters_b": size, "gpus": gpus, **error_figures(e)}
            for (size, gpus, _, label), e in grouped((l, g, (), e) for l, g, e in labelled)]


def checked_layouts(labelled):
    """The rows of one check grouped by model, GPU count and layout (TP, pipeline stages, nodes,
    GPUs per node, GPUs per NVLink domain), for racksim to gather the rows of a scenario's kind of
    layout (analysis/validation_evidence.h): [(label, gpus, layout, error in per cent)] -> their
    rows, MAPE, mean and worst."""
    return [{"run": label, "parameters_b": size, "gpus": gpus, "tp": tp, "pp": pp, "nodes": nodes,
             "gpus_per_node": per_node, "scale_up_domain_gpus": domain,
             **error_figures(e), "worst_percent": round(worst(e), 1)}
            for (size, gpus, (tp, pp, nodes, per_node, domain), label), e in grouped(labelled)]


def check_of(what, errors, labels, gpus, layouts, in_sample):
    return {"what": what, "rows": len(errors), "mape_percent": round(mape(errors), 2),
            "worst_percent": round(worst(errors), 1), "in_sample": in_sample,
            "runs": checked_runs(zip(labels, gpus, errors)),
            "layouts": checked_layouts(zip(labels, gpus, layouts, errors))}


def layout_of(fields):
    """(TP, pipeline stages, nodes, GPUs per node, GPUs per NVLink domain) from a row's scenario
    fields; the single-node fits set hardware.nodes=1 on their command line, not per row."""
    return (int(fields["layout.tp"]), int(fields["layout.pp"]),
            int(fields.get("hardware.nodes", 1)),
            int(fields.get("hardware.gpus_per_node", GPUS_PER_NODE)),
            int(fields.get("hardware.scale_up.domain_size", SCALE_UP_DOMAIN_GPUS)))


def evidence_check(what, rows, column, reference, label, layout, in_sample=False):
    """One check of the evidence file: a configuration's errors over one table; `label` names
    a row's model ('GPT 175B'), `layout` its layout_of."""
    e = errors_of(rows, f"{column}_step_time_s", reference)
    return check_of(what, e, [label(r) for r in rows], [r["gpus"] for r in rows],
                    [layout(r) for r in rows], in_sample)


def overrides_of(row):
    return dict(o.split("=", 1) for o in row["overrides"])


def gpus_of(row):
    """A calibrate row's GPU count: its layout's product (none of these rows has CP)."""
    o = overrides_of(row)
    return int(o["layout.tp"]) * int(o["layout.pp"]) * int(o["layout.dp"])


def fit_check(what, log, not_fitted, in_sample=False):
    """One check of the evidence file from a calibrate report: its rows outside the fit (or all
    of them), their mean |error| and the signed worst."""
    rows = [r for r in report(json_of(log))["rows"] if not (not_fitted and r["fitted_on"])]
    e = [100 * r["fitted_error"] for r in rows]
    return check_of(what, e, [f"GPT {r['group']}" for r in rows], [gpus_of(r) for r in rows],
                    [layout_of(overrides_of(r)) for r in rows], in_sample)


def label_by_name(path, label):
    """A row's label from the table's input file, found by the row's name (the results files
    hold no model): label(input row) for the input row of that name."""
    labels = {r["name"]: label(r) for r in results(path)}
    return lambda row: labels[row["name"]]


def layout_by_name(path):
    """A row's layout_of from the table's input file, by the row's name."""
    return label_by_name(path, layout_of)


# The systems NVIDIA's pages name, by the hardware preset their rows run on.
SYSTEMS = {"dgx-h100": "DGX H100", "hgx-b200": "DGX B200", "hgx-b300": "DGX B300",
           "gb200-nvl72": "GB200 NVL72", "gb300-nvl72": "GB300 NVL72"}


def per_preset_checks(table, what, label):
    """The checks of a published table whose rows each name their hardware preset
    (data/published/TABLE.csv): a function of a preset and a column giving that preset's check;
    `what` names it, with {system} for the system its rows ran on."""
    table_in = f"data/published/{table}.csv"
    rows = results(f"data/published/{table}-results.csv")
    preset_of = label_by_name(table_in, lambda r: r["hardware.preset"])
    layout = layout_by_name(table_in)
    return lambda preset, column: [
        evidence_check(what.format(system=SYSTEMS[preset]),
                       [r for r in rows if preset_of(r) == preset], column,
                       "published_step_time_s", label, layout)]


# A run's label by the model preset its row names (the tables of NVIDIA's pages).
PRESET_LABELS = {"llama3-8b": "Llama 3 8B", "llama3-70b": "Llama 3 70B",
                 "llama3-405b": "Llama 3.1 405B", "qwen3-30b-a3b": "Qwen3 30.5B",
                 "qwen3-235b-a22b": "Qwen3 235B", "deepseek-v3": "DeepSeek-V3 671B"}


def preset_label(path):
    """A row's label from the model preset it names in the table's input file."""
    return label_by_name(path, lambda r: PRESET_LABELS[r["model.preset"]])


def gpt_label(row):
    """gpt-39.1b-tp2-pp16-dp16-mb3 -> GPT 39.1B."""
    return f"GPT {model_label(row['name']).split()[0]}"


def evidence():
    """The evidence file: per hardware preset, calibration file, clock ratio, training dtype
    (16-bit: FP16 or BF16, one Tensor Core rate; FP8) and model kind (a configuration's sixth
    entry, "MoE", or dense without one), the rows of the README's table that configuration was
    checked on, as `racksim run` prints them."""
    published, measured = "published_step_time_s", "measured_step_time_s"
    nar = results("data/published/narayanan-sc21-table1-results.csv")
    bridge = results("data/published/megatron-bridge-h100-results.csv")
    nemo = results("data/published/nemo-24.07-h100-results.csv")
    dsv3 = results("data/published/deepseek-v3-h800-results.csv")
    large = results("data/measured/vtrain-a100-multi-node-large-results.csv")
    mpt = results("data/published/llm-foundry-mpt-a100-results.csv")
    titan = results("data/published/torchtitan-a100-results.csv")
    nemo_label = label_by_name("data/published/nemo-24.07-h100.csv", lambda r: r["model"])
    bridge_label = preset_label("data/published/megatron-bridge-h100.csv")

    blackwell = per_preset_checks(
        "megatron-bridge-blackwell", "NVIDIA's Llama 3 8B and 3.1 405B FP8 rows on {system}",
        preset_label("data/published/megatron-bridge-blackwell.csv"))
    gpt_oss = per_preset_checks(
        "megatron-bridge-gpt-oss", "NVIDIA's gpt-oss-120b (MoE) BF16 rows on 64 GPUs of {system}",
        lambda r: "gpt-oss 116.8B")
    moe = per_preset_checks(
        "megatron-bridge-moe", "NVIDIA's Qwen3 and DeepSeek-V3 (MoE) rows on {system}",
        preset_label("data/published/megatron-bridge-moe.csv"))
    modelzoo = per_preset_checks(
        "megatron-moe-modelzoo",
        "NVIDIA's MoE team's Qwen3 BF16 runs (ModelZoo, Megatron-LM) on {system}",
        preset_label("data/published/megatron-moe-modelzoo.csv"))
    # The presets whose MoE rows of that table ran in BF16 (NVL72) and in FP8 (DGX H100).
    moe_bf16, moe_fp8 = ("gb200-nvl72", "gb300-nvl72"), ("dgx-h100",)
    nar_layout = layout_by_name("data/published/narayanan-sc21-table1.csv")
    large_layout = layout_by_name("data/measured/vtrain-a100-multi-node-large.csv")
    bridge_layout = layout_by_name("data/published/megatron-bridge-h100.csv")
    nemo_layout = layout_by_name("data/published/nemo-24.07-h100.csv")
    dsv3_layout = layout_by_name("data/published/deepseek-v3-h800.csv")
    mpt_layout = layout_by_name("data/published/llm-foundry-mpt-a100.csv")
    titan_layout = layout_by_name("data/published/torchtitan-a100.csv")
    titan_label = label_by_name("data/published/torchtitan-a100.csv", lambda r: r["group"])

    def a100(column):
        return [evidence_check("Narayanan et al. SC'21 Table 1, GPT 1.7B-1T on 32-3,072 A100",
                               nar, column, published, gpt_label, nar_layout),
                evidence_check("MosaicML's MPT runs, 125M-70B on 8-64 A100 (FlashAttention 1.x)",
                               mpt, column, published,
                               lambda row: f"MPT {model_label(row['name'])}", mpt_layout),
                evidence_check("torchtitan's Llama 2 and 3, 8B-70B on 64 A100 (FSDP2)", titan,
                               column, published, titan_label, titan_layout),
                evidence_check("vTrain's 39.1B and 175B runs on 512 A100", large, column,
                               measured, gpt_label, large_layout)]

    def h100(column):
        return [evidence_check("NVIDIA's Llama 3 70B and 3.1 405B FP8 rows on 64-1,024 H100",
                               bridge, column, published, bridge_label, bridge_layout),
                evidence_check("NVIDIA's NeMo 24.07 FP8 rows on 8-512 H100", nemo, column,
                               published, nemo_label, nemo_layout)]

    def h800(column):
        return [evidence_check("DeepSeek-V3 on 2,048 H800 (a whole-run average)", dsv3, column,
                               published, lambda row: "DeepSeek-V3 671B", dsv3_layout)]

    configs = [
        ("dgx-a100", "", HELD, "16-bit", a100("datasheet")),
        ("dgx-a100", "", BURST_RATIO, "16-bit", a100("burst")),
        ("dgx-a100", "a100-kernel-calibration.textproto", BURST_RATIO, "16-bit",
         a100("transfer") + [
             fit_check("vTrain's single-node runs outside the fit, 0.20B-1.31B on 8 A100",
                       "a100-single-node-fit.log.txt", not_fitted=True),
             fit_check("vTrain's multi-node runs, 3.6B and 18.4B on 64-256 A100",
                       "a100-kernel-fit.log.txt", not_fitted=False, in_sample=True)]),
        ("dgx-h100", "", HELD, "FP8", h100("datasheet")),
        ("dgx-h100", "", BURST_RATIO, "FP8", h100("burst")),
        *[(preset, "", ratio, "FP8", blackwell(preset, column))
          for preset in ("hgx-b200", "gb200-nvl72", "gb300-nvl72")
          for ratio, column in HELD_AND_BURST],
        *[(preset, "", ratio, "16-bit",
           gpt_oss(preset, column) + (moe(preset, column) if preset in moe_bf16 else []) +
           (modelzoo(preset, column) if preset in ("dgx-h100", "gb200-nvl72") else []), "MoE")
          for preset in ("dgx-h100", "hgx-b200", "hgx-b300", "gb200-nvl72", "gb300-nvl72")
          for ratio, column in HELD_AND_BURST],
        *[(preset, "", ratio, "FP8", moe(preset, column), "MoE")
          for preset in moe_fp8
          for ratio, column in HELD_AND_BURST],
        ("hgx-h800", "", HELD, "FP8", h800("datasheet"), "MoE"),
        ("hgx-h800", "", BURST_RATIO, "FP8", h800("burst"), "MoE"),
    ]
    return {"written_by": "scripts/accuracy.py from the results files of the README's accuracy "
                          "table; do not edit",
            "configurations": [{"hardware_preset": preset, "calibration": calibration,
                                "sustained_clock_ratio": ratio, "training_dtype": dtype,
                                "model_kind": kind[0] if kind else "dense", "checks": checks}
                               for preset, calibration, ratio, dtype, checks, *kind in configs]}


def write_evidence(check):
    """Writes (or, with check, compares) the evidence file racksim compiles in."""
    text = json.dumps(evidence(), indent=1) + "\n"
    path = os.path.join(ROOT, EVIDENCE)
    old = open(path).read() if os.path.exists(path) else ""
    if check:
        if old != text:
            sys.exit(f"accuracy: {EVIDENCE} differs from the results files "
                     "(run scripts/accuracy.py RACKSIM --table-only)")
        print(f"accuracy: {EVIDENCE} matches the results files")
    elif old != text:
        with open(path, "w") as f:
            f.write(text)
        print(f"accuracy: wrote {EVIDENCE}")
