#!/usr/bin/env python3
"""The burst and held rate of a training step's own mix of kernels on one Hopper GPU.

measure-hopper.py holds one 8,192-cube GEMM for seconds; a step mixes GEMMs, attention and
HBM-bound kernels, which draw different power. This runs the kernels of one transformer layer,
forward and backward, back to back (--layer llama3-70b-tp4: hidden 8,192, MLP 28,672, 64 heads
of 128 with 8 KV heads, so per rank 16 query heads and 2 KV heads; llama31-405b-tp8: hidden
16,384, MLP 53,248, 128 heads and 8 KV heads over TP8, so 16 and 1 per rank; a sequence of
8,192 tokens, causal), after an idle pause, and times every layer pass with CUDA events:

  GEMMs    the four linear layers' forward, input-gradient and weight-gradient products, BF16
           (torch.matmul) or FP8 (torch._scaled_mm, per-tensor scales, BF16 output, fast
           accumulation in the forward as Transformer Engine runs it);
  attention  cuDNN's fused kernel (scaled_dot_product_attention), forward and backward, BF16,
           the KV heads repeated to the query heads;
  HBM      two RMS norms, SwiGLU and two residual adds forward, each again backward.

For each GEMM dtype: the burst is the fastest pass within BURST_S of the start, the held rate
the mean pass after SETTLE_S; their ratio is the step's hardware.compute.sustained_clock_ratio
as far as one layer's kernels tell it (no communication kernels, no NVLink or NIC power).

usage (device machine): python3 scripts/device/measure-step-mix.py --out "$OUT"
       python3 scripts/device/measure-step-mix.py --out "$OUT" --layer llama31-405b-tp8 --tokens 4096
       python3 scripts/device/measure-step-mix.py --plan     # the kernels, without a GPU
"""
import argparse
import csv
import os
import subprocess
import sys
import time
from dataclasses import dataclass

from gemm_calls import gemm_call  # scripts/device/gemm_calls.py
from timing import open_log  # scripts/device/timing.py

TOKENS = 8192  # the sequence; --tokens below it: a rank's share under context parallelism
HEAD_DIM = 128


@dataclass(frozen=True)
class Layer:
    """One rank's share of a transformer layer under tensor parallelism."""
    hidden: int
    ffn: int  # the rank's MLP width (the model's over TP)
    heads: int  # the rank's query heads
    kv_heads: int  # the rank's KV heads


LAYERS = {
    "llama3-70b-tp4": Layer(hidden=8192, ffn=28672 // 4, heads=64 // 4, kv_heads=8 // 4),
    "llama31-405b-tp8": Layer(hidden=16384, ffn=53248 // 8, heads=128 // 8, kv_heads=8 // 8),
}
COOL_S = 5.0
RUN_S = 15.0
BURST_S = 0.1
SETTLE_S = 5.0


def linear_shapes(layer, tokens):
    """(name, m, k, n) of the forward products per rank."""
    qkv = (layer.heads + 2 * layer.kv_heads) * HEAD_DIM
    h = layer.hidden
    return [("qkv", tokens, h, qkv), ("proj", tokens, layer.heads * HEAD_DIM, h),
            ("fc1", tokens, h, 2 * layer.ffn), ("fc2", tokens, layer.ffn, h)]


def products(layer, tokens=TOKENS):
    """Every GEMM of a layer's forward and backward: (name, m, k, n, forward?)."""
    out = []
    for name, m, k, n in linear_shapes(layer, tokens):
        out.append((name, m, k, n, True))
        out.append((name + ".dgrad", m, n, k, False))  # dX[m,k] = dY[m,n] W[n,k]
        out.append((name + ".wgrad", k, m, n, False))  # dW[k,n] = X^T[k,m] dY[m,n]
    return out


def attention_block(torch, heads, q_tokens, kv_tokens, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q = torch.randn((1, heads, q_tokens, HEAD_DIM), device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    k, v = (torch.randn((1, heads, kv_tokens, HEAD_DIM), device="cuda", dtype=torch.bfloat16,
                        requires_grad=True) for _ in range(2))
    grad = torch.randn_like(q)

    def run():
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        out.backward(grad)
        q.grad = k.grad = v.grad = None

    return run


def attention_calls(torch, layer, tokens):
    """The whole sequence causal on one rank; with context parallelism (tokens below the
    sequence), a rank's share of the causal work as ring attention's blocks: its causal block
    on the diagonal and a full block of half as many keys (tokens^2 units of work in all)."""
    if tokens == TOKENS:
        return [attention_block(torch, layer.heads, tokens, tokens, True)]
    return [attention_block(torch, layer.heads, tokens, tokens, True),
            attention_block(torch, layer.heads, tokens, tokens // 2, False)]


def elementwise_calls(torch, layer, tokens):
    x = torch.randn(tokens, layer.hidden, device="cuda", dtype=torch.bfloat16)
    y = torch.randn_like(x)
    gate = torch.randn(tokens, layer.ffn, device="cuda", dtype=torch.bfloat16)
    up = torch.randn_like(gate)
    weight = torch.ones(layer.hidden, device="cuda", dtype=torch.bfloat16)
    norm = lambda: torch.nn.functional.rms_norm(x, (layer.hidden,), weight)
    swiglu = lambda: torch.nn.functional.silu(gate) * up
    residual = lambda: torch.add(x, y)
    # Forward and backward each: 2 norms, SwiGLU, 2 residual adds.
    return [norm, norm, swiglu, residual, residual] * 2


def layer_pass(torch, layer, dtype, tokens):
    calls = [gemm_call(torch, "fp8fast" if dtype == "fp8" and fwd else dtype, m, n, k)
             for _, m, k, n, fwd in products(layer, tokens)]
    calls += attention_calls(torch, layer, tokens)
    calls += elementwise_calls(torch, layer, tokens)

    def run():
        for call in calls:
            call()

    return run


def layer_flops(layer, tokens):
    """GEMM and attention FLOPs of one pass, attention counted as attention_calls runs it
    (forward 4 h q kv d, half of it causal; backward 2.5 x the forward)."""
    gemm = sum(2 * m * k * n for _, m, k, n, _ in products(layer, tokens))
    blocks = [(tokens, 0.5)] + ([(tokens // 2, 1.0)] if tokens < TOKENS else [])
    attention = sum(3.5 * 4 * layer.heads * tokens * kv * HEAD_DIM * share for kv, share in blocks)
    return gemm, attention


def measure(torch, layer, dtype, rows, log, tokens, run_s):
    run = layer_pass(torch, layer, dtype, tokens)
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    time.sleep(COOL_S)
    start = time.monotonic()
    passes = []
    while time.monotonic() - start < run_s:
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        run()
        end.record()
        end.synchronize()
        ms = begin.elapsed_time(end)
        t = time.monotonic() - start
        passes.append((t, ms))
        rows.writerow({"gemm_dtype": dtype, "t_s": f"{t:.3f}", "pass_ms": f"{ms:.4f}"})
    burst = min(ms for t, ms in passes if t <= BURST_S)
    held = [ms for t, ms in passes if t > SETTLE_S]
    held_ms = sum(held) / len(held)
    log(f"{dtype}: burst pass {burst:.3f} ms, held {held_ms:.3f} ms over {len(held)} passes: "
        f"ratio {burst / held_ms:.3f}")
    del run
    torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "out"))
    parser.add_argument("--tokens", type=int, default=TOKENS,
                        help="tokens per rank (4096: the same layer at context parallelism 2)")
    parser.add_argument("--layer", choices=sorted(LAYERS), default="llama3-70b-tp4")
    parser.add_argument("--run-s", type=float, default=RUN_S)
    parser.add_argument("--plan", action="store_true")
    args = parser.parse_args()
    layer = LAYERS[args.layer]
    if args.plan:
        for name, m, k, n, fwd in products(layer, args.tokens):
            print(f"{name:11s} m {m:6d} k {k:6d} n {n:6d} {'forward' if fwd else 'backward'}")
        gemm, attention = layer_flops(layer, args.tokens)
        print(f"GEMM {gemm:.3e} FLOPs, attention {attention:.3e} FLOPs per pass; "
              f"{COOL_S:.0f} s idle + {args.run_s:.0f} s per dtype")
        return 0
    import torch
    os.makedirs(args.out, exist_ok=True)
    log, _ = open_log(os.path.join(args.out, "step-mix-log.txt"), stamped=False)

    smi_out = open(os.path.join(args.out, "step-mix-smi.csv"), "w")
    query = "timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"
    smi_out.write(query + "\n")
    smi_out.flush()
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits",
                            "-lms", "100"], stdout=smi_out, stderr=subprocess.DEVNULL)
    with open(os.path.join(args.out, "step-mix.csv"), "w", newline="") as f:
        rows = csv.DictWriter(f, fieldnames=["gemm_dtype", "t_s", "pass_ms"])
        rows.writeheader()
        log(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}; "
            f"{args.layer}: {products(layer, args.tokens)}")
        for dtype in ("fp8", "bf16"):
            measure(torch, layer, dtype, rows, log, args.tokens, args.run_s)
    smi.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
