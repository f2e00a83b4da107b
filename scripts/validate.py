#!/usr/bin/env python3
"""Simulates every row of a published-throughput table and compares racksim with the paper.

usage: scripts/validate.py RACKSIM [--jobs N] [--table NAME] [--only NAME,...] [--set PATH=VALUE ...]

Default table: data/published/narayanan-sc21-table1.csv on
scenarios/validation/megatron-gpt-a100.textproto. Columns with a dot are scenario overrides;
`published_tflops_per_gpu` is the paper's achieved TFLOP/s per GPU. The paper's FLOPs per step
(its eq. 3, recompute included) turn both into step times:

    F = 96 B s l h^2 (1 + s / (6 h) + V / (16 l h))
    published step = F / (GPUs x published TFLOP/s);  predicted TFLOP/s = F / (GPUs x step)

Writes data/published/<table>-results.csv and prints the markdown table with the errors
(predicted / published step time - 1; MAPE over the rows; the largest miss).
"""
import csv, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
TABLES = {
    "narayanan-sc21-table1": "scenarios/validation/megatron-gpt-a100.textproto",
}
SEQ, VOCAB, GPUS_PER_NODE = 2048, 51200, 8


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def paper_flops(row):
    b = float(row["training.global_batch_size"])
    l = float(row["model.num_layers"])
    h = float(row["model.hidden_size"])
    return 96 * b * SEQ * l * h * h * (1 + SEQ / (6 * h) + VOCAB / (16 * l * h))


def simulate(racksim, base, row, extra):
    sets = [a for k, v in row.items() if "." in k and v != ""
            for a in ("--set", f"{k}={v}")]
    out = subprocess.run([racksim, "run", base, *sets, *extra], capture_output=True,
                         text=True, cwd=ROOT)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1:] or ["failed"]
    line = next(l for l in out.stdout.splitlines() if l.startswith("step time"))
    return float(line.split()[2]), None


def main():
    racksim = os.path.abspath(sys.argv[1])
    args = sys.argv[2:]
    jobs, table, only = 1, "narayanan-sc21-table1", None
    while args[:1] in (["--jobs"], ["--table"], ["--only"]):
        if args[0] == "--jobs":
            jobs = int(args[1])
        elif args[0] == "--only":
            only = args[1].split(",")
        else:
            table = args[1]
        args = args[2:]
    points = rows(os.path.join(ROOT, "data", "published", table + ".csv"))
    if only:
        points = [p for p in points if p["name"] in only]
    base = TABLES[table]
    with ThreadPoolExecutor(jobs) as pool:
        sims = list(pool.map(lambda r: simulate(racksim, base, r, args), points))
    print("| model | GPUs | TP | PP | DP | v | mb | batch | published TFLOP/s | predicted TFLOP/s"
          " | published step (s) | predicted step (s) | error |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    errors, out_rows = [], []
    for p, (step, err) in zip(points, sims):
        gpus = int(p["hardware.nodes"]) * GPUS_PER_NODE
        flops = paper_flops(p)
        published_tflops = float(p["published_tflops_per_gpu"])
        published_step = flops / (gpus * published_tflops * 1e12)
        cells = [p["name"], gpus, p["layout.tp"], p["layout.pp"], p["layout.dp"],
                 p["layout.virtual_stages"], p["training.micro_batch_size"],
                 p["training.global_batch_size"], f"{published_tflops:.0f}"]
        if step is None:
            print("| " + " | ".join(map(str, cells)) + f" | not simulated: {err[0]} | | | |")
            continue
        predicted_tflops = flops / (gpus * step) / 1e12
        error = step / published_step - 1
        errors.append((abs(error), p["name"]))
        cells += [f"{predicted_tflops:.1f}", f"{published_step:.2f}", f"{step:.2f}",
                  f"{100 * error:+.1f}%"]
        print("| " + " | ".join(map(str, cells)) + " |")
        out_rows.append({"name": p["name"], "gpus": gpus, "published_tflops_per_gpu":
                         published_tflops, "predicted_tflops_per_gpu": f"{predicted_tflops:.2f}",
                         "published_step_time_s": f"{published_step:.4f}",
                         "predicted_step_time_s": f"{step:.4f}",
                         "error_percent": f"{100 * error:+.2f}"})
    if errors:
        mape = 100 * sum(e for e, _ in errors) / len(errors)
        worst = max(errors)
        within = sum(1 for e, _ in errors if e <= 0.10)
        print(f"\nrows {len(errors)} of {len(points)}: MAPE {mape:.1f}%, worst {100 * worst[0]:.1f}%"
              f" ({worst[1]}), within 10%: {within}")
    with open(os.path.join(ROOT, "data", "published", table + "-results.csv"), "w",
              newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(out_rows[0].keys()) if out_rows else ["name"])
        writer.writeheader()
        writer.writerows(out_rows)


if __name__ == "__main__":
    main()
