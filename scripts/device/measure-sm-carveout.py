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
  beside.csv      the FP8 GEMMs again with 0, 16 and 24 SMs carved out, alone and with a copy
                  loop (256 MiB BF16 copies, back to back) running beside them on another
                  stream, the stand-in for a communication kernel on the SMs the GEMM leaves:
                  the GEMM's time and the bytes the copies moved (read + written) while it ran;
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
from attention_calls import FIELDS as ATTENTION_FIELDS, attention_cells  # attention_calls.py
from timing import Rows, error_text, failed_cells, run_sections, timed_cells  # scripts/device/timing.py

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
BESIDE_CARVEOUTS = (0, 16, 24)
BESIDE_GEMMS = 20
COPY_MIB = 256


def with_carveout(torch, carveout, measure):
    """measure() with `carveout` SMs kept from cuBLASLt's GEMMs, reset afterwards. A PyTorch
    without the knob raises AttributeError before anything is set or measured."""
    torch._C._set_sm_carveout_experimental(carveout)
    try:
        return measure()
    finally:
        torch._C._set_sm_carveout_experimental(None)


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
                        row.update(with_carveout(torch, carveout, lambda: timed_cells(
                            torch, fn, 2 * m * n * k, args.min_ms, args.cool_s)))
                    except AttributeError as error:  # a PyTorch without the knob
                        row.update(failed_cells(error))
                    rows.add(row)
                del fn
                torch.cuda.empty_cache()
    finally:
        rows.close()


def gemm_beside_copy(torch, fn, copies, cool_s):
    """(ms per GEMM, GB/s the copies moved while the GEMMs ran) for BESIDE_GEMMS GEMMs on the
    current stream, with `copies` (a list of callables, or empty) launched first on a side
    stream, each followed by an event."""
    side = torch.cuda.Stream()
    fn()
    torch.cuda.synchronize()
    time.sleep(cool_s)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    marks = []
    with torch.cuda.stream(side):
        for copy in copies:
            copy()
            marks.append(torch.cuda.Event(enable_timing=True))
            marks[-1].record()
    start.record()  # after the copies are queued: the GEMMs start at once
    for _ in range(BESIDE_GEMMS):
        fn()
    stop.record()
    torch.cuda.synchronize()
    window_ms = start.elapsed_time(stop)
    done = sum(1 for mark in marks if 0 < start.elapsed_time(mark) <= window_ms)
    moved = 2 * COPY_MIB * 2**20 * done
    return window_ms / BESIDE_GEMMS, moved / window_ms / 1e6


def measure_beside(torch, out, args, log):
    rows = Rows(os.path.join(out, "beside.csv"),
                ["shape", "m", "k", "n", "carveout_sms", "beside_copy", "gemm_ms", "tflops",
                 "copy_gb_per_s", "error"])
    elements = COPY_MIB * 2**20 // 2
    src = torch.randn(elements, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    try:
        for name, m, k, n in SHAPES:
            fn = gemm_call(torch, "fp8", m, n, k)
            for carveout in BESIDE_CARVEOUTS:
                for beside in (False, True):
                    row = {"shape": name, "m": m, "k": k, "n": n, "carveout_sms": carveout,
                           "beside_copy": int(beside)}
                    try:
                        # Enough copies to outlast the GEMMs even at a tenth of the HBM rate.
                        copies = [lambda: dst.copy_(src)] * (400 if beside else 0)
                        ms, copy_rate = with_carveout(torch, carveout, lambda: gemm_beside_copy(
                            torch, fn, copies, args.cool_s))
                        row.update(gemm_ms=f"{ms:.5f}", tflops=f"{2 * m * n * k / ms / 1e9:.1f}",
                                   copy_gb_per_s=f"{copy_rate:.0f}" if beside else "", error="")
                    except (RuntimeError, TypeError, ValueError, AttributeError) as error:
                        row.update(gemm_ms="", tflops="", copy_gb_per_s="", error=error_text(error))
                    rows.add(row)
            del fn
            torch.cuda.empty_cache()
    finally:
        rows.close()


def measure_attention(torch, out, args):
    rows = Rows(os.path.join(out, "attention.csv"),
                ["batch", "heads", "seq", "qk_dim", "v_dim"] + ATTENTION_FIELDS)
    try:
        for qk in (128, 192, 128, 192):
            row = {"batch": 2, "heads": 128, "seq": 4096, "qk_dim": qk, "v_dim": 128}
            row.update(attention_cells(torch, "cudnn", 2, 128, 4096, qk, 128, True, args.min_ms,
                                       args.cool_s, warmup=1))
            rows.add(row)
            torch.cuda.empty_cache()
    finally:
        rows.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "out"))
    parser.add_argument("--min-ms", type=float, default=10)
    parser.add_argument("--cool-s", type=float, default=0.25)
    parser.add_argument("--only", default="carveout,beside,attention",
                        help="comma-separated sections: carveout, beside, attention")
    parser.add_argument("--plan", action="store_true")
    args = parser.parse_args()
    if args.plan:
        count = len(SHAPES) * 2 * len(CARVEOUTS)
        print(f"{count} GEMM measurements, 4 attention; about "
              f"{(count + 4) * (args.cool_s + 0.03):.0f} s")
        return 0
    import torch
    sections = [
        ("carveout", lambda log: measure_carveout(torch, args.out, args, log)),
        ("beside", lambda log: measure_beside(torch, args.out, args, log)),
        ("attention", lambda log: measure_attention(torch, args.out, args)),
    ]
    only = args.only.split(",")
    run_sections(torch, args.out, "log.txt", [s for s in sections if s[0] in only])
    return 0


if __name__ == "__main__":
    sys.exit(main())
