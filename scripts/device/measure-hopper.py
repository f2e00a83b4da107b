#!/usr/bin/env python3
"""Kernel microbenchmarks of one Hopper GPU (H100/H200) for racksim's compute model.

One prepared run, about 3 minutes of device time (under 7 minutes with --budget-s at its
default), that measures what racksim's kernel model takes as inputs:

  gemm.csv       BF16 and FP8 (E4M3, per-tensor scales, BF16 output: Transformer Engine's
                 delayed-scaling recipe as cuBLASLt runs it through torch._scaled_mm) GEMM
                 throughput over the linear layers of Llama-style models (hidden 4,096 to
                 16,384, TP 1/4/8, 256 to 16,384 tokens), squares, decode rows, and an m sweep
                 in steps of 128 rows (wave quantization over the SMs);
  attention.csv  scaled-dot-product attention, forward and backward, flash and cuDNN backends,
                 BF16, head dimension 64 and 128, causal or not, 1K to 32K tokens;
  hbm.csv        HBM bandwidth of a copy, an add and a read-only sum, 256 MiB and 4 GiB;
  sustained.csv  a large BF16 and a large FP8 GEMM, each after 5 s idle, for 25 s
                 (--sustained-s): throughput in 20 ms windows for the first 2 s (the burst: on
                 an H200 the power limit bites within 0.1-0.3 s), then per second, to tell a
                 short benchmark's rate from what a GPU holds once its power limit bites;
  smi.csv        nvidia-smi samples (SM clock, power, temperature, throttle reasons) every
                 100 ms over the whole run, for the same question;
  env.json       the GPU, driver, CUDA, cuBLAS and PyTorch versions and the clocks at start.

Usage (on the device machine; $OUT is the folder whose files come back):
  python3 scripts/device/measure-hopper.py --out "$OUT"
  python3 scripts/device/measure-hopper.py --out "$OUT" --only gemm --gemm-dtypes fp8fast,bf16
      (--only picks sections; fp8fast: FP8 with cuBLASLt's fast accumulation)
  python3 scripts/device/measure-hopper.py --plan      # here, without a GPU: what it would run

Every measurement is timed with CUDA events after warm-up iterations, repeated until at least
--min-ms of GPU time, on random data (zeros run faster on Hopper's tensor cores). A failed
shape is recorded with its error and the run goes on; a section that would pass --budget-s is
skipped and said so in log.txt. FLOPs: 2 m n k per GEMM; attention forward 4 b h s^2 d (half
of it causal), backward 2.5 x the forward (FlashAttention-2's count).
"""

import argparse
import json
import os
import subprocess
import sys
import time

from gemm_calls import gemm_call  # scripts/device/gemm_calls.py
from attention_calls import attention_cells  # scripts/device/attention_calls.py
from timing import Rows, open_log, start_smi, timed  # scripts/device/timing.py

# Linear layers of a Llama-style block (SwiGLU MLP, grouped-query attention with 8 KV heads of
# 128), per tensor-parallel rank: (name, n, k) for hidden h, MLP width f and tp ranks.
MODELS = {  # hidden: (MLP width, heads)
    4096: (14336, 32),
    8192: (28672, 64),
    16384: (53248, 128),
}
TPS = (1, 4, 8)
TOKENS = (256, 1024, 4096, 8192, 16384)
SQUARES = (1024, 2048, 4096, 8192, 16384)
DECODE_ROWS = (16, 64, 128)
SWEEP_NK = (8192, 8192)
SWEEP_ROWS = tuple(range(128, 8192 + 1, 128))
ATTN_SEQS = (1024, 2048, 4096, 8192, 16384, 32768)
ATTN_TOKENS = 65536  # batch x sequence per call
ATTN_HEADS = 16
SUSTAINED_S = 25.0
COOL_S = 5.0  # idle seconds before each sustained run
FINE_WINDOW_S = 0.02
FINE_FOR_S = 2.0
SECTIONS = ("hbm", "gemm", "attention", "sustained")


def linear_layers(hidden, tp):
    ffn, heads = MODELS[hidden]
    kv_width = 2 * 8 * 128
    return [
        ("qkv", (hidden + kv_width) // tp, hidden),
        ("proj", hidden, hidden // tp),
        ("fc1", 2 * ffn // tp, hidden),
        ("fc2", hidden, ffn // tp),
    ]


def gemm_plan():
    """(group, m, n, k) for one dtype, in the order they run."""
    plan = []
    for s in SQUARES:
        plan.append(("square", s, s, s))
    for hidden in MODELS:
        for tp in TPS:
            for name, n, k in linear_layers(hidden, tp):
                for m in TOKENS:
                    plan.append((f"h{hidden}.tp{tp}.{name}", m, n, k))
                for m in DECODE_ROWS:
                    plan.append((f"h{hidden}.tp{tp}.{name}.decode", m, n, k))
    for m in SWEEP_ROWS:
        plan.append(("sweep", m, SWEEP_NK[0], SWEEP_NK[1]))
    return plan


def attention_plan():
    plan = []
    for backend in ("flash", "cudnn"):
        for d in (128, 64):
            for causal in (True, False):
                for s in ATTN_SEQS:
                    plan.append((backend, max(1, ATTN_TOKENS // s), ATTN_HEADS, s, d, causal))
    return plan


class Budget:
    def __init__(self, seconds, log):
        self.end = time.monotonic() + seconds
        self.log = log

    def left(self):
        return self.end - time.monotonic()

    def allows(self, section, needs_s):
        if self.left() >= needs_s:
            return True
        self.log(f"skipped {section}: {self.left():.0f} s left, it needs about {needs_s:.0f} s")
        return False


def environment(torch):
    props = torch.cuda.get_device_properties(0)
    env = {
        "measured_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gpu": props.name,
        "sms": props.multi_processor_count,
        "memory_bytes": props.total_memory,
        "compute_capability": f"{props.major}.{props.minor}",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
    }
    query = "driver_version,clocks.max.sm,clocks.max.mem,power.limit,power.max_limit"
    try:
        smi = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                             capture_output=True, text=True)
        env["nvidia_smi"] = {"query": query, "answer": smi.stdout.strip() or smi.stderr.strip()}
    except OSError as error:
        env["nvidia_smi"] = {"query": query, "answer": str(error)}
    return env


def measure_hbm(torch, rows, min_ms):
    for mib in (256, 4096):
        elems = mib * 2**20 // 2
        x = torch.randn(elems, device="cuda", dtype=torch.bfloat16)
        y = torch.randn_like(x)
        z = torch.empty_like(x)
        nbytes = elems * 2
        cases = [
            ("copy", lambda: z.copy_(x), 2 * nbytes),
            ("add", lambda: torch.add(x, y, out=z), 3 * nbytes),
            ("sum", lambda: x.sum(dtype=torch.float32), nbytes),
        ]
        for name, fn, moved in cases:
            ms = timed(torch, fn, min_ms)
            rows.add({"kernel": name, "mib": mib, "bytes_moved": moved, "ms": f"{ms:.5f}",
                      "gb_per_s": f"{moved / ms / 1e6:.1f}"})
        del x, y, z
        torch.cuda.empty_cache()


def measure_gemms(torch, rows, min_ms, budget, log, dtypes, cool_s=0.0, large_only=False):
    """cool_s: idle seconds before each shape, so that each is timed at its burst rate (the
    power limit bites only after tens of milliseconds of full load); large_only: the shapes
    with 4,096 rows or more, no decode rows."""
    plan = gemm_plan()
    if large_only:
        plan = [p for p in plan if p[1] >= 4096 and not p[0].endswith(".decode")]
    for dtype in dtypes:
        if not budget.allows(f"{dtype} GEMMs", 30):
            continue
        for group, m, n, k in plan:
            if budget.left() < 15:
                log(f"stopped the {dtype} GEMMs at {group} m={m}: budget")
                break
            row = {"dtype": dtype, "group": group, "m": m, "n": n, "k": k}
            try:
                fn = gemm_call(torch, dtype, m, n, k)
                torch.cuda.synchronize()
                time.sleep(cool_s)
                ms = timed(torch, fn, min_ms, warmup=1 if cool_s else 3)
                row.update(ms=f"{ms:.5f}", tflops=f"{2 * m * n * k / ms / 1e9:.1f}", error="")
            except (RuntimeError, TypeError, ValueError) as error:
                row.update(ms="", tflops="", error=str(error).splitlines()[0][:160])
            rows.add(row)
            torch.cuda.empty_cache()


def measure_attention(torch, rows, min_ms, budget, log):
    for backend, b, h, s, d, causal in attention_plan():
        if budget.left() < 10:
            log(f"stopped attention at {backend} s={s}: budget")
            break
        row = {"backend": backend, "batch": b, "heads": h, "seq": s, "head_dim": d,
               "causal": int(causal)}
        row.update(attention_cells(torch, backend, b, h, s, d, d, causal, min_ms))
        rows.add(row)
        torch.cuda.empty_cache()


def measure_sustained(torch, rows, budget, log, seconds):
    """Windows of FINE_WINDOW_S over the first FINE_FOR_S (the burst before the power limit
    bites, which a one-second window averages away), then of one second."""
    size = 8192
    for dtype in ("bf16", "fp8"):
        if not budget.allows(f"sustained {dtype}", seconds + 8):
            continue
        fn = gemm_call(torch, dtype, size, size, size)
        flops = 2 * size**3
        torch.cuda.synchronize()
        time.sleep(COOL_S)  # start from cool clocks: the first windows are the burst rate
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            window_s = FINE_WINDOW_S if time.monotonic() - start < FINE_FOR_S else 1.0
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            calls = 0
            window_start = time.monotonic()
            while time.monotonic() - window_start < window_s:
                for _ in range(4):
                    fn()
                calls += 4
                end.record()
                end.synchronize()
            ms = begin.elapsed_time(end)
            rows.add({"dtype": dtype, "m": size, "n": size, "k": size,
                      "t_s": f"{time.monotonic() - start:.2f}", "calls": calls,
                      "tflops": f"{flops * calls / ms / 1e9:.1f}"})
        torch.cuda.synchronize()


def run(out_dir, budget_s, min_ms, only, dtypes, sustained_s, cool_s=0.0, large_only=False):
    os.makedirs(out_dir, exist_ok=True)
    log, log_file = open_log(os.path.join(out_dir, "log.txt"))

    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    budget = Budget(budget_s, log)
    smi = start_smi(os.path.join(out_dir, "smi.csv"), log)
    try:
        env = environment(torch)
        with open(os.path.join(out_dir, "env.json"), "w") as f:
            json.dump(env, f, indent=1)
        log(f"{env['gpu']}, {env['sms']} SMs, torch {env['torch']}, CUDA {env['cuda']}")
        sections = [
            ("hbm", ["kernel", "mib", "bytes_moved", "ms", "gb_per_s"],
             lambda r: measure_hbm(torch, r, min_ms), 10),
            ("gemm", ["dtype", "group", "m", "n", "k", "ms", "tflops", "error"],
             lambda r: measure_gemms(torch, r, min_ms, budget, log, dtypes, cool_s, large_only),
             30),
            ("attention", ["backend", "batch", "heads", "seq", "head_dim", "causal", "fwd_ms",
                           "bwd_ms", "fwd_tflops", "bwd_tflops", "error"],
             lambda r: measure_attention(torch, r, min_ms, budget, log), 20),
            ("sustained", ["dtype", "m", "n", "k", "t_s", "calls", "tflops"],
             lambda r: measure_sustained(torch, r, budget, log, sustained_s), sustained_s + 8),
        ]
        for name, fields, measure, needs_s in sections:
            if name not in only or not budget.allows(name, needs_s):
                continue
            rows = Rows(os.path.join(out_dir, f"{name}.csv"), fields)
            began = time.monotonic()
            try:
                measure(rows)
            finally:
                rows.close()
            log(f"{name}: {time.monotonic() - began:.0f} s")
    finally:
        if smi is not None:
            smi.terminate()
        log(f"done, {budget.left():.0f} s of the budget left")
        log_file.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "out"))
    parser.add_argument("--budget-s", type=float, default=400,
                        help="stop starting new measurements after this many seconds")
    parser.add_argument("--min-ms", type=float, default=20,
                        help="GPU time each measurement accumulates")
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help="comma-separated sections to run, in their fixed order")
    parser.add_argument("--gemm-dtypes", default="bf16,fp8",
                        help="comma-separated from bf16, fp8, fp8fast (fast accumulation)")
    parser.add_argument("--sustained-s", type=float, default=SUSTAINED_S)
    parser.add_argument("--cool-s", type=float, default=0.0,
                        help="idle seconds before each GEMM shape (burst rates)")
    parser.add_argument("--large-only", action="store_true",
                        help="GEMM shapes with 4,096 rows or more only")
    parser.add_argument("--plan", action="store_true", help="print the plan; needs no GPU")
    args = parser.parse_args()
    only = args.only.split(",")
    dtypes = args.gemm_dtypes.split(",")
    if not set(only) <= set(SECTIONS) or not set(dtypes) <= {"bf16", "fp8", "fp8fast"}:
        parser.error(f"--only takes {','.join(SECTIONS)}; --gemm-dtypes bf16,fp8,fp8fast")
    if args.plan:
        gemms, attn = gemm_plan(), attention_plan()
        print(f"GEMM shapes per dtype: {len(gemms)} (BF16 and FP8: {2 * len(gemms)})")
        print(f"attention configurations: {len(attn)} (forward and forward+backward each)")
        print(f"HBM: copy, add, sum at 256 and 4096 MiB; sustained: 2 x {SUSTAINED_S:.0f} s")
        return 0
    run(args.out, args.budget_s, args.min_ms, only, dtypes, args.sustained_s, args.cool_s,
        args.large_only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
