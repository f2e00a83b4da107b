#!/usr/bin/env python3
"""Is the MoE rows' missing time per pass or per token? Pairs of published rows that differ in
the tokens one micro-batch carries through a layer (docs/validation.md, experiment log,
"7 December, close").

usage: scripts/moe-pass-share.py [--check]

For each pair of rows on one system and model, one with k times the tokens per pass of the
other, the missing time of the larger-pass row is M = published - racksim, per token. A cost
paid once per pass (a kernel launch, a host sync per layer, a per-layer floor) costs k times as
much per token in the smaller-pass row; a cost per token (a kernel's rate, bytes moved per
token) the same. With f the share of M paid per pass:

    published_small = racksim_small + M (1 + f (k - 1))  per token, so
    f = ((published_small - racksim_small) / M - 1) / (k - 1).

The step times come from the committed results files (scripts/validate.py writes them), so the
figures follow the last validation run. --check exits 1 unless every pair's f lies within
+-0.15: the missing time scales with the tokens, not with the passes.

Caution: each pair sets two releases against each other, so a cost per pass that the later
software reduced reads here as a cost per token (docs/validation.md, the MoE section).
"""
import csv, os, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUBLISHED = os.path.join(ROOT, "data", "published")

# (label, results file, larger-pass row, its tokens per pass, smaller-pass row, its tokens).
# Not a pair: gpt-oss-120b on 64 H100 (25.11 against 26.02). The 25.11 page prints micro-batch
# 4, which does not fit the H100 in racksim's ledger (98.5 GB of 85.5; scripts/memory-fit.py)
# and which Megatron-Bridge's recipe for that layout sets to 1; at 1 both rows carry 4,096 tokens
# a pass and racksim misses both by the same -40.5 and -40.6 %.
PAIRS = [
    ("Qwen3-30B-A3B on 16 H100, FP8", "megatron-bridge-moe-results.csv",
     "qwen3-30b-h100-25.11", 2 * 4096, "qwen3-30b-h100-26.02", 1 * 4096),
    ("gpt-oss-120b on 64 GB200, BF16", "megatron-bridge-gpt-oss-results.csv",
     "gpt-oss-120b-gb200-26.02", 4 * 4096, "gpt-oss-120b-gb200-25.11", 1 * 8192),
]
LIMIT = 0.15


def rows(name):
    with open(os.path.join(PUBLISHED, name)) as f:
        return {r["name"]: r for r in csv.DictReader(f)}


def per_token_s(row):
    """(published, racksim) seconds per token per GPU."""
    published = float(row["published_step_time_s"])
    tokens = float(row["published_tokens_per_s_per_gpu"]) * published
    return published / tokens, float(row["datasheet_step_time_s"]) / tokens


def pass_share(large, small, k):
    """(f, missing share of the larger-pass row's published time)."""
    large_pub, large_sim = per_token_s(large)
    small_pub, small_sim = per_token_s(small)
    missing = large_pub - large_sim
    return ((small_pub - small_sim) / missing - 1) / (k - 1), missing / large_pub


def main(argv):
    check = "--check" in argv
    print("| pair | tokens per pass | missing share of the larger-pass step | share paid per pass (f) |")
    print("|---|---|---|---|")
    worst = 0.0
    for label, results, large_name, large_tokens, small_name, small_tokens in PAIRS:
        table = rows(results)
        f, missing = pass_share(table[large_name], table[small_name],
                                large_tokens / small_tokens)
        worst = max(worst, abs(f))
        print(f"| {label} | {large_tokens:,} against {small_tokens:,} | {missing:.2f} | {f:+.3f} |")
    if check and worst > LIMIT:
        sys.exit(f"moe-pass-share: a pair's share paid per pass is {worst:.3f}, over {LIMIT}")


if __name__ == "__main__":
    main(sys.argv[1:])
