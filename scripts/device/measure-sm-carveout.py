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

from gemm_calls import gemm_call  # scripts/device/gemm_calls.py
from attention_calls import FIELDS as ATTENTION_FIELDS, attention_cells  # attention_calls.py
from timing import Rows, failed_cells, run_sections, timed_cells  # scripts/device/timing.py

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
                        row.update(timed_cells(torch, fn, 2 * m * n * k, args.min_ms, args.cool_s))
                    except AttributeError as error:  # a PyTorch without the knob
                        row.update(failed_cells(error))
                    rows.add(row)
                torch._C._set_sm_carveout_experimental(None)
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
    parser.add_argument("--plan", action="store_true")
    args = parser.parse_args()
    if args.plan:
        count = len(SHAPES) * 2 * len(CARVEOUTS)
        print(f"{count} GEMM measurements, 4 attention; about "
              f"{(count + 4) * (args.cool_s + 0.03):.0f} s")
        return 0
    import torch
    run_sections(torch, args.out, "log.txt", [
        ("carveout", lambda log: measure_carveout(torch, args.out, args, log)),
        ("attention", lambda log: measure_attention(torch, args.out, args)),
    ])
    return 0


if __name__ == "__main__":
    sys.exit(main())
