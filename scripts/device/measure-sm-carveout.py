#!/usr/bin/env python3
"""GEMMs on fewer SMs, and attention at head dimension 128 beside DeepSeek-V3's, on one Hopper GPU.

Transformer Engine's TP communication overlap runs its reduce-scatter kernels on some SMs while
the GEMM beside them spreads its tiles over the rest (set_sm_margin); racksim times such a GEMM
with the tile model over sm_count - training.tp_comm_overlap_sms SMs (KernelShape.reserved_sms).
This measures that directly: the GEMMs Transformer Engine overlaps (Llama 3 70B at TP4 and
Llama 3.1 405B at TP8: the row-parallel forward products before their pipelined reduce-scatter,
the weight-gradient products under their bulk reduce-scatter) with cuBLASLt told to leave 0 to
66 SMs free (torch._C._set_sm_carveout_experimental, PyTorch's knob for cuBLASLt's SM count
target), BF16 and FP8 (per-tensor scales), each after --cool-s idle (burst rates):

  carveout.csv    shape, dtype, SMs carved out, time, TFLOP/s;
  attention.csv   cuDNN attention, causal, 128 heads of 2 x 4,096 tokens, head dimension 128
                  against DeepSeek-V3's 192 (query, key) and 128 (value), forward and
                  forward + backward, at burst like moe/mla-attention.csv;
  smi.csv         nvidia-smi every 100 ms.

usage (device machine): python3 scripts/device/measure-sm-carveout.py --out "$OUT"
"""
import argparse
import os
import sys
import time

from gemm_calls import gemm_call  # scripts/device/gemm_calls.py
from timing import Rows, start_smi, timed  # scripts/device/timing.py

# (name, m, k, n): C[m, n] = A[m, k] B[k, n]; tokens 8,192 a rank.
SHAPES = [
    ("70b-tp4.proj", 8192, 2048, 8192),
    ("70b-tp4.fc2", 8192, 7168, 8192),
    ("70b-tp4.qkv.wgrad", 8192, 8192, 2560),
    ("70b-tp4.fc1.wgrad", 8192, 8192, 14336),
    ("405b-tp8.proj", 8192, 2048, 16384),
    ("405b-tp8.fc2", 8192, 6656, 16384),
]
CARVEOUTS = (0, 8, 16, 24, 32, 66)


def measure_carveout(torch, out, args, log):
    rows = Rows(os.path.join(out, "carveout.csv"),
                ["shape", "m", "k", "n", "dtype", "carveout_sms", "ms", "tflops", "error"])
    try:
        for name, m, k, n in SHAPES:
            for dtype in ("fp8", "bf16"):
                fn = gemm_call(torch, dtype, m, n, k)
                for carveout in CARVEOUTS:
                    row = {"shape": name, "m": m, "k": k, "n": n, "dtype": dtype,
                           "carveout_sms": carveout}
                    try:
                        torch._C._set_sm_carveout_experimental(carveout)
                        torch.cuda.synchronize()
                        time.sleep(args.cool_s)
                        ms = timed(torch, fn, args.min_ms, warmup=1)
                        row.update(ms=f"{ms:.5f}", tflops=f"{2 * m * n * k / ms / 1e9:.1f}",
                                   error="")
                    except (RuntimeError, TypeError, ValueError, AttributeError) as error:
                        row.update(ms="", tflops="", error=str(error).splitlines()[0][:200])
                    rows.add(row)
                torch._C._set_sm_carveout_experimental(None)
                del fn
                torch.cuda.empty_cache()
    finally:
        rows.close()


def measure_attention(torch, out, args):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    rows = Rows(os.path.join(out, "attention.csv"),
                ["batch", "heads", "seq", "qk_dim", "v_dim", "fwd_ms", "bwd_ms", "fwd_tflops",
                 "bwd_tflops", "error"])
    try:
        for qk, v_dim in ((128, 128), (192, 128), (128, 128), (192, 128)):
            batch, heads, seq = 2, 128, 4096
            row = {"batch": batch, "heads": heads, "seq": seq, "qk_dim": qk, "v_dim": v_dim}
            try:
                q, k = (torch.randn((batch, heads, seq, qk), device="cuda", dtype=torch.bfloat16,
                                    requires_grad=True) for _ in range(2))
                v = torch.randn((batch, heads, seq, v_dim), device="cuda", dtype=torch.bfloat16,
                                requires_grad=True)
                grad = torch.randn((batch, heads, seq, v_dim), device="cuda",
                                   dtype=torch.bfloat16)

                def forward():
                    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                        return torch.nn.functional.scaled_dot_product_attention(
                            q, k, v, is_causal=True)

                def forward_backward():
                    forward().backward(grad)
                    q.grad = k.grad = v.grad = None

                flops = 2 * batch * heads * seq * seq * (qk + v_dim) * 0.5
                torch.cuda.synchronize()
                time.sleep(args.cool_s)
                with torch.no_grad():
                    fwd_ms = timed(torch, forward, args.min_ms, warmup=1)
                total_ms = timed(torch, forward_backward, args.min_ms, warmup=1)
                bwd_ms = max(total_ms - fwd_ms, 1e-9)
                row.update(fwd_ms=f"{fwd_ms:.5f}", bwd_ms=f"{bwd_ms:.5f}",
                           fwd_tflops=f"{flops / fwd_ms / 1e9:.1f}",
                           bwd_tflops=f"{2.5 * flops / bwd_ms / 1e9:.1f}", error="")
            except (RuntimeError, TypeError, ValueError) as error:
                row.update(fwd_ms="", bwd_ms="", fwd_tflops="", bwd_tflops="",
                           error=str(error).splitlines()[0][:200])
            rows.add(row)
            torch.cuda.empty_cache()
    finally:
        rows.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "out"))
    parser.add_argument("--min-ms", type=float, default=10)
    parser.add_argument("--cool-s", type=float, default=0.25)
    parser.add_argument("--plan", action="store_true")
    args = parser.parse_args()
    if args.plan:
        count = len(SHAPES) * 2 * len(CARVEOUTS)
        print(f"{count} GEMM measurements, 4 attention; about "
              f"{(count + 4) * (args.cool_s + 0.03):.0f} s")
        return 0
    import torch
    os.makedirs(args.out, exist_ok=True)
    log_file = open(os.path.join(args.out, "log.txt"), "w")

    def log(message):
        line = f"[{time.strftime('%H:%M:%S')}] {message}"
        print(line, flush=True)
        log_file.write(line + "\n")
        log_file.flush()

    smi = start_smi(os.path.join(args.out, "smi.csv"), log)
    try:
        log(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}")
        began = time.monotonic()
        measure_carveout(torch, args.out, args, log)
        log(f"carveout: {time.monotonic() - began:.0f} s")
        began = time.monotonic()
        measure_attention(torch, args.out, args)
        log(f"attention: {time.monotonic() - began:.0f} s")
    finally:
        if smi is not None:
            smi.terminate()
        log_file.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
