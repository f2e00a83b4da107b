#!/bin/sh
# The 4,096-wide layers of NeMo 24.07's H100 table (data/published/nemo-24.07-h100.csv), whose
# rows racksim gives 6-14 % fast while the wide rows land within 5 %: each layer's kernels held
# for 8 s per GEMM dtype, then each kernel on its own (measure-step-mix.py --per-kernel), so a
# comparison with racksim's kernel model says whether the missing time is in the kernels, and
# in which kind. About 2 minutes on one Hopper GPU. The device returns at most 8 files, so the
# four layers' folders travel as one archive.
#
# usage (device machine, from the repository root): sh scripts/device/measure-narrow-layers.sh "$OUT"
set -eu
out=${1:?usage: measure-narrow-layers.sh OUT}
work=$(mktemp -d)
cd "$(dirname "$0")"
for layer in gpt3-5b-tp1 nemotron4-8b-tp2 llama2-7b-tp1 llama3-8b-cp2; do
  python3 measure-step-mix.py --out "$work/$layer" --layer "$layer" --run-s 8 --per-kernel
done
tar czf "$out/narrow-layers.tgz" -C "$work" .
