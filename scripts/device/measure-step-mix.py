#!/usr/bin/env python3
"""The burst and held rate of a training step's own mix of kernels on one Hopper GPU.

measure-hopper.py holds one 8,192-cube GEMM for seconds; a step mixes GEMMs, attention and
HBM-bound kernels, which draw different power. This runs the kernels of one transformer layer,
forward and backward, back to back, after an idle pause, and times every layer pass with CUDA
events. Layers (--layer; one rank's share, heads of 128, causal):

  llama3-70b-tp4    hidden 8,192, MLP 28,672, 64 heads and 8 KV heads over TP4; 8,192 tokens
  llama31-405b-tp8  hidden 16,384, MLP 53,248, 128 heads and 8 KV heads over TP8; 8,192 tokens
  The 4,096-wide models of NeMo 24.07's H100 table (data/published/nemo-24.07-h100.csv), whose
  rows racksim gives 6-14 % fast, a micro-batch each as the table's layouts run it:
  gpt3-5b-tp1       LayerNorm, GELU MLP of 16,384, 32 heads; 4 sequences of 2,048
  nemotron4-8b-tp2  LayerNorm, squared-ReLU MLP of 16,384, 32 heads over TP2, norms and residual
                    adds on half the tokens (sequence parallelism); 4 sequences of 4,096
  llama2-7b-tp1     RMS norm, SwiGLU MLP of 11,008, 32 heads; 1 sequence of 4,096
  llama3-8b-cp2     RMS norm, SwiGLU MLP of 14,336, 32 heads and 8 KV heads; a sequence of 8,192
                    at context parallelism 2 (4,096 tokens a rank, as --tokens 4096 below)

  GEMMs    the four linear layers' forward, input-gradient and weight-gradient products, BF16
           (torch.matmul) or FP8 (torch._scaled_mm, per-tensor scales, BF16 output, fast
           accumulation in the forward as Transformer Engine runs it);
  attention  cuDNN's fused kernel (scaled_dot_product_attention), forward and backward, BF16,
           the KV heads repeated to the query heads;
  HBM      two norms, the MLP's activation and two residual adds forward, each again backward.

With --per-kernel, each kernel of the pass is then timed on its own as well (its mean over a
batch of calls after the held run, step-mix-kernels.csv): which kind of kernel a model of the
pass gets wrong, not only by how much.

For each GEMM dtype: the burst is the fastest pass within BURST_S of the start, the held rate
the mean pass after SETTLE_S; their ratio is the step's hardware.compute.sustained_clock_ratio
as far as one layer's kernels tell it (no communication kernels, no NVLink or NIC power).

usage (device machine): python3 scripts/device/measure-step-mix.py --out "$OUT"
       python3 scripts/device/measure-step-mix.py --out "$OUT" --layer llama31-405b-tp8 --tokens 4096
       python3 scripts/device/measure-step-mix.py --out "$OUT/gpt3-5b" --layer gpt3-5b-tp1 --per-kernel
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
from timing import Rows, open_log, timed  # scripts/device/timing.py

HEAD_DIM = 128


@dataclass(frozen=True)
class Layer:
    """One rank's share of a transformer layer under tensor parallelism, for one micro-batch."""
    hidden: int
    ffn: int  # the rank's MLP width (the model's over TP)
    heads: int  # the rank's query heads
    kv_heads: int  # the rank's KV heads
    seq: int = 8192  # the sequence length
    batch: int = 1  # sequences in a micro-batch
    cp: int = 1  # context parallelism: a rank holds seq / cp tokens of each sequence
    norm: str = "rms"  # "rms" (RMS norm) or "layer" (LayerNorm with a bias)
    mlp: str = "swiglu"  # "swiglu" (gate and up), "gelu" or "relu2" (squared ReLU): one up
    sp: int = 1  # sequence parallelism: norms and residual adds on tokens / sp

    def tokens(self):
        """The rank's tokens of a micro-batch."""
        return self.batch * self.seq // self.cp


LAYERS = {
    "llama3-70b-tp4": Layer(hidden=8192, ffn=28672 // 4, heads=64 // 4, kv_heads=8 // 4),
    "llama31-405b-tp8": Layer(hidden=16384, ffn=53248 // 8, heads=128 // 8, kv_heads=8 // 8),
    "gpt3-5b-tp1": Layer(hidden=4096, ffn=16384, heads=32, kv_heads=32, seq=2048, batch=4,
                         norm="layer", mlp="gelu"),
    "nemotron4-8b-tp2": Layer(hidden=4096, ffn=16384 // 2, heads=32 // 2, kv_heads=32 // 2,
                              seq=4096, batch=4, norm="layer", mlp="relu2", sp=2),
    "llama2-7b-tp1": Layer(hidden=4096, ffn=11008, heads=32, kv_heads=32, seq=4096),
    "llama3-8b-cp2": Layer(hidden=4096, ffn=14336, heads=32, kv_heads=8, cp=2),
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
            ("fc1", tokens, h, (2 if layer.mlp == "swiglu" else 1) * layer.ffn),
            ("fc2", tokens, layer.ffn, h)]


def products(layer, tokens):
    """Every GEMM of a layer's forward and backward: (name, m, k, n, forward?)."""
    out = []
    for name, m, k, n in linear_shapes(layer, tokens):
        out.append((name, m, k, n, True))
        out.append((name + ".dgrad", m, n, k, False))  # dX[m,k] = dY[m,n] W[n,k]
        out.append((name + ".wgrad", k, m, n, False))  # dW[k,n] = X^T[k,m] dY[m,n]
    return out


def attention_block(torch, batch, heads, q_tokens, kv_tokens, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q = torch.randn((batch, heads, q_tokens, HEAD_DIM), device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    k, v = (torch.randn((batch, heads, kv_tokens, HEAD_DIM), device="cuda", dtype=torch.bfloat16,
                        requires_grad=True) for _ in range(2))
    grad = torch.randn_like(q)

    def run():
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        out.backward(grad)
        q.grad = k.grad = v.grad = None

    return run


def attention_blocks(layer, tokens):
    """(name, batch, queries, keys, causal) of the rank's attention kernels: each sequence
    causal; with context parallelism (tokens below the micro-batch's), a rank's share of the
    causal work as ring attention's blocks: its causal block on the diagonal and a full block
    of half as many keys (tokens^2 units of work per sequence in all)."""
    q = tokens // layer.batch
    if tokens == layer.batch * layer.seq:
        return [("attention", layer.batch, q, q, True)]
    return [("attention.diagonal", layer.batch, q, q, True),
            ("attention.ring", layer.batch, q, q // 2, False)]


def attention_calls(torch, layer, tokens):
    return [(name, attention_block(torch, batch, layer.heads, q, kv, causal))
            for name, batch, q, kv, causal in attention_blocks(layer, tokens)]


def activation_call(torch, layer, tokens):
    """The MLP's activation on the rank's tokens (BF16): SwiGLU reads gate and up, GELU and the
    squared ReLU read one."""
    up = torch.randn(tokens, layer.ffn, device="cuda", dtype=torch.bfloat16)
    if layer.mlp == "swiglu":
        gate = torch.randn_like(up)
        return lambda: torch.nn.functional.silu(gate) * up
    if layer.mlp == "gelu":
        return lambda: torch.nn.functional.gelu(up, approximate="tanh")
    return lambda: torch.square(torch.relu(up))


def elementwise_calls(torch, layer, tokens):
    """(name, call) of the HBM-bound kernels: forward and backward each run 2 norms, the
    activation and 2 residual adds; norms and adds on tokens / sp (sequence parallelism)."""
    x = torch.randn(tokens // layer.sp, layer.hidden, device="cuda", dtype=torch.bfloat16)
    y = torch.randn_like(x)
    weight = torch.ones(layer.hidden, device="cuda", dtype=torch.bfloat16)
    if layer.norm == "rms":
        norm = lambda: torch.nn.functional.rms_norm(x, (layer.hidden,), weight)
    else:
        bias = torch.zeros_like(weight)
        norm = lambda: torch.nn.functional.layer_norm(x, (layer.hidden,), weight, bias)
    activation = activation_call(torch, layer, tokens)
    residual = lambda: torch.add(x, y)
    one_way = [(layer.norm + "_norm", norm), (layer.norm + "_norm", norm),
               (layer.mlp, activation), ("residual", residual), ("residual", residual)]
    return one_way * 2


def named_calls(torch, layer, dtype, tokens):
    """(name, call) of every kernel of one forward and backward pass."""
    calls = [(name, gemm_call(torch, "fp8fast" if dtype == "fp8" and fwd else dtype, m, n, k))
             for name, m, k, n, fwd in products(layer, tokens)]
    return calls + attention_calls(torch, layer, tokens) + elementwise_calls(torch, layer, tokens)


def layer_pass(calls):
    def run():
        for _, call in calls:
            call()

    return run


def layer_flops(layer, tokens):
    """GEMM and attention FLOPs of one pass, attention counted as attention_calls runs it
    (forward 4 h q kv d, half of it causal; backward 2.5 x the forward)."""
    gemm = sum(2 * m * k * n for _, m, k, n, _ in products(layer, tokens))
    attention = sum(3.5 * 4 * layer.heads * batch * q * kv * HEAD_DIM * (0.5 if causal else 1)
                    for _, batch, q, kv, causal in attention_blocks(layer, tokens))
    return gemm, attention


def per_kernel(torch, calls, dtype, kernel_rows):
    """Each kernel of the pass on its own, right after the held run: mean ms over a batch of
    calls of at least 5 ms (timing.timed); a name that occurs twice in a pass is timed twice."""
    for index, (name, call) in enumerate(calls):
        ms = timed(torch, call, 5.0, warmup=1)
        kernel_rows.add({"gemm_dtype": dtype, "index": index, "kernel": name, "ms": f"{ms:.5f}"})


def measure(torch, calls, dtype, rows, log, run_s):
    run = layer_pass(calls)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "out"))
    parser.add_argument("--tokens", type=int, default=None,
                        help="tokens per rank (default the layer's micro-batch; half of it: the "
                             "same layer at context parallelism 2)")
    parser.add_argument("--layer", choices=sorted(LAYERS), default="llama3-70b-tp4")
    parser.add_argument("--run-s", type=float, default=RUN_S)
    parser.add_argument("--per-kernel", action="store_true",
                        help="after each dtype's held run, time every kernel on its own too")
    parser.add_argument("--plan", action="store_true")
    args = parser.parse_args()
    layer = LAYERS[args.layer]
    tokens = args.tokens or layer.tokens()
    if args.plan:
        for name, m, k, n, fwd in products(layer, tokens):
            print(f"{name:11s} m {m:6d} k {k:6d} n {n:6d} {'forward' if fwd else 'backward'}")
        for name, batch, q, kv, causal in attention_blocks(layer, tokens):
            print(f"{name:18s} {batch} x {layer.heads} heads, {q} queries on {kv} keys"
                  f"{', causal' if causal else ''}")
        gemm, attention = layer_flops(layer, tokens)
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
    kernel_rows = None
    if args.per_kernel:
        kernel_rows = Rows(os.path.join(args.out, "step-mix-kernels.csv"),
                           ["gemm_dtype", "index", "kernel", "ms"])
    with open(os.path.join(args.out, "step-mix.csv"), "w", newline="") as f:
        rows = csv.DictWriter(f, fieldnames=["gemm_dtype", "t_s", "pass_ms"])
        rows.writeheader()
        log(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}; "
            f"{args.layer}, {tokens} tokens: {products(layer, tokens)}, "
            f"{attention_blocks(layer, tokens)}")
        for dtype in ("fp8", "bf16"):
            calls = named_calls(torch, layer, dtype, tokens)
            measure(torch, calls, dtype, rows, log, args.run_s)
            if kernel_rows is not None:
                per_kernel(torch, calls, dtype, kernel_rows)
            del calls
            torch.cuda.empty_cache()
    if kernel_rows is not None:
        kernel_rows.close()
    smi.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
