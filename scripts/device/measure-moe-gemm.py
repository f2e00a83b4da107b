#!/usr/bin/env python3
"""Grouped (MoE expert) GEMMs and FP8 with fine-grained scales on one Hopper GPU.

racksim times a rank's routed experts as one GEMM over all the token copies they received
(workloads/model/mlp_ledger.cpp: moe.experts.up and .down), and every FP8 GEMM at one rate
whatever its scaling. This measures what those two simplifications leave out, on DeepSeek-V3's
expert shapes (hidden 7,168, expert MLP 2,048; up: k 7,168, n 4,096 (gate and up fused);
down: k 2,048, n 7,168):

  moe-gemm.csv    G local experts of T token copies each (G 1-32, T 256-8,192): one grouped
                  GEMM (torch._grouped_mm, BF16; torch._scaled_grouped_mm, FP8 E4M3 with one
                  scale per row and per output column) against one dense GEMM of all G x T rows
                  (what racksim times: torch.matmul, and torch._scaled_mm with the same
                  scales); the forward product, and for BF16 forward + backward (autograd: the
                  input and weight gradients); a skewed split of the same rows (experts loaded
                  2.0 to 0.5 x the mean) as routing leaves them;
  fp8-scales.csv  dense FP8 GEMMs of DeepSeek-V3's shapes under three scalings: one scale per
                  tensor (Transformer Engine's per-tensor recipes), per row and column, and
                  DeepSeek-V3's blocks (1 x 128 activations, 128 x 128 weights: cuBLAS's block
                  scaling through torch._scaled_mm, where this PyTorch has it);
  mla-attention.csv  DeepSeek-V3's attention as its training ran it (no TP: 128 heads, query
                  and key head dimension 192, value 128; causal, 4,096 tokens a sequence),
                  forward and forward + backward, cuDNN and flash backends of
                  scaled_dot_product_attention; FLOPs 2 s^2 h (192 + 128) forward, half causal;
  probe.txt       which of these PyTorch calls exist here, with the error of those that fail;
  smi.csv         nvidia-smi samples every 100 ms.

Each measurement starts after --cool-s idle (the burst rate, as gemm-burst/ was measured) and
accumulates --min-ms of GPU time (CUDA events, after one warm-up call), on random data. A failing
call is recorded with its error and the run goes on. FLOPs: 2 m n k per product; backward twice
the forward.

usage (device machine): python3 scripts/device/measure-moe-gemm.py --out "$OUT"
       python3 scripts/device/measure-moe-gemm.py --plan      # without a GPU: what it runs
"""
import argparse
import os
import sys
import traceback

from attention_calls import FIELDS as ATTENTION_FIELDS, attention_cells  # attention_calls.py
from timing import Rows, error_text, failed_cells, run_sections, timed_cells  # scripts/device/timing.py

HIDDEN = 7168
EXPERT_FFN = 2048
SHAPES = {"up": (HIDDEN, 2 * EXPERT_FFN), "down": (EXPERT_FFN, HIDDEN)}  # (k, n)
GROUPS = (1, 4, 8, 16, 32)
TOKENS_PER_EXPERT = (256, 1024, 4096, 8192)
SKEW = (2.0, 1.5, 1.0, 1.0, 0.75, 0.75, 0.5, 0.5)  # loads over the mean, eight experts
DENSE_ROWS = (4096, 16384, 65536)
BLOCK = 128
VARIANTS = ("bf16.grouped", "bf16.dense", "fp8.grouped", "fp8.dense", "bf16.grouped.fwdbwd",
            "bf16.dense.fwdbwd")


def moe_plan():
    """(shape, G, rows per expert as a tuple) of every grouped measurement."""
    plan = [(shape, g, (t,) * g) for shape in SHAPES for g in GROUPS for t in TOKENS_PER_EXPERT]
    for shape in SHAPES:
        plan.append((shape, len(SKEW), tuple(int(4096 * s) for s in SKEW)))
    return plan


def offsets(torch, rows):
    ends, total = [], 0
    for r in rows:
        total += r
        ends.append(total)
    return torch.tensor(ends, device="cuda", dtype=torch.int32)


def fp8(torch, t):
    return (t * 0.1).to(torch.float8_e4m3fn)


def moe_calls(torch, shape, rows):
    """The six variants' callables for one grouped product: x[M,k] by G weights [k,n]."""
    k, n = SHAPES[shape]
    g, m = len(rows), sum(rows)
    bf = torch.bfloat16
    x = torch.randn(m, k, device="cuda", dtype=bf)
    w = torch.randn(g, n, k, device="cuda", dtype=bf)  # as nn.Linear keeps them: [n, k]
    offs = offsets(torch, rows)
    x8, w8 = fp8(torch, x), fp8(torch, w)
    row_scale = torch.ones(m, device="cuda", dtype=torch.float32)
    col_scale = torch.ones(g, n, device="cuda", dtype=torch.float32)
    xg = x.detach().clone().requires_grad_(True)
    wg = w.detach().clone().requires_grad_(True)
    w0 = w[0].detach().clone().requires_grad_(True)
    grad = torch.randn(m, n, device="cuda", dtype=bf)

    def grouped_fwdbwd():
        out = torch._grouped_mm(xg, wg.transpose(-2, -1), offs=offs)
        out.backward(grad)
        xg.grad = wg.grad = None

    def dense_fwdbwd():
        out = torch.matmul(xg, w0.t())
        out.backward(grad)
        xg.grad = w0.grad = None

    return {
        "bf16.grouped": lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs),
        "bf16.dense": lambda: torch.matmul(x, w[0].t()),
        "fp8.grouped": lambda: torch._scaled_grouped_mm(
            x8, w8.transpose(-2, -1), row_scale, col_scale, offs=offs, out_dtype=bf),
        "fp8.dense": lambda: torch._scaled_mm(
            x8, w8[0].t(), scale_a=row_scale.view(m, 1), scale_b=col_scale[0].view(1, n),
            out_dtype=bf),
        "bf16.grouped.fwdbwd": grouped_fwdbwd,
        "bf16.dense.fwdbwd": dense_fwdbwd,
    }


def block_scales(torch, m, n, k):
    """Candidate layouts of cuBLAS's block scales (1 x 128 for A, 128 x 128 for B): A's
    [m, k/128] kept outer-dim-major; B's in four arrangements, the first that runs is used."""
    kb, nb = k // BLOCK, n // BLOCK
    f32 = torch.float32
    scale_a = torch.ones(kb, m, device="cuda", dtype=f32).t()
    b_candidates = [
        torch.ones(nb, kb, device="cuda", dtype=f32).t(),
        torch.ones(kb, nb, device="cuda", dtype=f32),
        torch.ones(nb, kb, device="cuda", dtype=f32),
        torch.ones(kb, nb, device="cuda", dtype=f32).t(),
    ]
    return scale_a, b_candidates


def fp8_scale_calls(torch, m, n, k, log):
    bf = torch.bfloat16
    a8 = fp8(torch, torch.randn(m, k, device="cuda", dtype=bf))
    b8 = fp8(torch, torch.randn(n, k, device="cuda", dtype=bf)).t()
    one = torch.ones((), device="cuda", dtype=torch.float32)
    rows = torch.ones(m, 1, device="cuda", dtype=torch.float32)
    cols = torch.ones(1, n, device="cuda", dtype=torch.float32)
    calls = {
        "tensor": lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=bf),
        "row": lambda: torch._scaled_mm(a8, b8, scale_a=rows, scale_b=cols, out_dtype=bf),
    }
    scale_a, b_candidates = block_scales(torch, m, n, k)
    errors = []
    for i, scale_b in enumerate(b_candidates):
        try:
            torch._scaled_mm(a8, b8, scale_a=scale_a, scale_b=scale_b, out_dtype=bf)
            torch.cuda.synchronize()
            calls["block"] = (lambda sb=scale_b: torch._scaled_mm(
                a8, b8, scale_a=scale_a, scale_b=sb, out_dtype=bf))
            log(f"block scales m={m} n={n} k={k}: B's scales as candidate {i} "
                f"{tuple(scale_b.shape)} stride {scale_b.stride()}")
            break
        except (RuntimeError, TypeError, ValueError) as error:
            errors.append(f"candidate {i}: {error_text(error)}")
    if "block" not in calls:
        log(f"block scales m={m} n={n} k={k}: none ran; " + " | ".join(errors))
    return calls


def measure_moe(torch, out, args, log):
    rows_out = Rows(os.path.join(out, "moe-gemm.csv"),
                    ["shape", "k", "n", "groups", "rows", "total_rows", "variant", "ms",
                     "tflops", "error"])
    try:
        for shape, g, rows in moe_plan():
            k, n = SHAPES[shape]
            m = sum(rows)
            try:
                calls = moe_calls(torch, shape, rows)
            except (RuntimeError, TypeError, ValueError, AttributeError) as error:
                log(f"moe {shape} G={g}: setup failed: {error}")
                continue
            for variant in VARIANTS:
                flops = 2 * m * n * k * (3 if variant.endswith("fwdbwd") else 1)
                row = {"shape": shape, "k": k, "n": n, "groups": g,
                       "rows": "/".join(map(str, rows)) if len(set(rows)) > 1 else rows[0],
                       "total_rows": m, "variant": variant}
                row.update(timed_cells(torch, calls[variant], flops, args.min_ms, args.cool_s))
                rows_out.add(row)
            del calls
            torch.cuda.empty_cache()
    finally:
        rows_out.close()


def measure_fp8_scales(torch, out, args, log):
    rows_out = Rows(os.path.join(out, "fp8-scales.csv"),
                    ["shape", "m", "n", "k", "scaling", "ms", "tflops", "error"])
    try:
        shapes = [(s, m, SHAPES[s][1], SHAPES[s][0]) for s in SHAPES for m in DENSE_ROWS]
        shapes.append(("cube", 8192, 8192, 8192))
        for shape, m, n, k in shapes:
            calls = fp8_scale_calls(torch, m, n, k, log)
            for scaling in ("tensor", "row", "block"):
                row = {"shape": shape, "m": m, "n": n, "k": k, "scaling": scaling}
                if scaling not in calls:
                    row.update(failed_cells(RuntimeError("not available in this PyTorch")))
                else:
                    row.update(timed_cells(torch, calls[scaling], 2 * m * n * k, args.min_ms,
                                            args.cool_s))
                rows_out.add(row)
            del calls
            torch.cuda.empty_cache()
    finally:
        rows_out.close()


def measure_mla(torch, out, args):
    rows_out = Rows(os.path.join(out, "mla-attention.csv"),
                    ["backend", "batch", "heads", "seq", "qk_dim", "v_dim"] + ATTENTION_FIELDS)
    try:
        for backend in ("cudnn", "flash", "efficient"):
            for seq, batch in ((4096, 2), (8192, 1)):
                row = {"backend": backend, "batch": batch, "heads": 128, "seq": seq,
                       "qk_dim": 192, "v_dim": 128}
                row.update(attention_cells(torch, backend, batch, 128, seq, 192, 128, True,
                                           args.min_ms, args.cool_s, warmup=1))
                rows_out.add(row)
                torch.cuda.empty_cache()
    finally:
        rows_out.close()


def probe(torch, out, log):
    """One small call of each API, so that a failing section says why in one place."""
    with open(os.path.join(out, "probe.txt"), "w") as f:
        for shape, rows in (("up", (256, 256)),):
            calls = moe_calls(torch, shape, rows)
            for variant in VARIANTS:
                try:
                    calls[variant]()
                    torch.cuda.synchronize()
                    f.write(f"{variant}: ok\n")
                except Exception:  # noqa: BLE001 -- the probe records whatever fails
                    f.write(f"{variant}: failed\n{traceback.format_exc(limit=2)}\n")
        calls = fp8_scale_calls(torch, 256, 4096, 7168, log)
        f.write(f"fp8 scalings available: {sorted(calls)}\n")
    with open(os.path.join(out, "probe.txt")) as f:
        log(f.read().strip())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "out"))
    parser.add_argument("--min-ms", type=float, default=10)
    parser.add_argument("--cool-s", type=float, default=0.25)
    parser.add_argument("--plan", action="store_true")
    args = parser.parse_args()
    if args.plan:
        plan = moe_plan()
        print(f"{len(plan)} grouped products x {len(VARIANTS)} variants; "
              f"{len(SHAPES) * len(DENSE_ROWS) + 1} FP8 shapes x 3 scalings; "
              f"about {(len(plan) * len(VARIANTS) + 21) * (args.cool_s + 0.05):.0f} s")
        for shape, g, rows in plan:
            print(f"{shape:5s} G {g:2d} rows {rows[0] if len(set(rows)) == 1 else rows}")
        return 0
    import torch
    run_sections(torch, args.out, "moe-log.txt", [
        ("probe", lambda log: probe(torch, args.out, log)),
        ("fp8 scales", lambda log: measure_fp8_scales(torch, args.out, args, log)),
        ("moe", lambda log: measure_moe(torch, args.out, args, log)),
        ("mla attention", lambda log: measure_mla(torch, args.out, args)),
    ])
    return 0


if __name__ == "__main__":
    sys.exit(main())
