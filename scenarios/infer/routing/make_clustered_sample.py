#!/usr/bin/env python3
"""Writes a synthetic token routing sample for expert_placement.token_routing_file.

Not a measurement: a stand-in with the structure routers learn, for trying placements. The
256 experts fall into 32 hidden groups of 8 (a seeded permutation, so that neither contiguous
nor round-robin placement matches them); a token picks a primary group (Zipf 0.8 over groups)
and chooses 5 of its 8 experts there, and 3 in a second group. Replace it with a sample logged
from a real router (one line per token: the ids of the experts it chose).

    python3 make_clustered_sample.py > deepseek-v3-clustered-4096.txt
"""
import random

EXPERTS, GROUPS, TOP_K, PRIMARY, TOKENS, SEED = 256, 32, 8, 5, 4096, 7

rng = random.Random(SEED)
ids = list(range(EXPERTS))
rng.shuffle(ids)
size = EXPERTS // GROUPS
groups = [ids[g * size:(g + 1) * size] for g in range(GROUPS)]
weights = [1.0 / (k + 1) ** 0.8 for k in range(GROUPS)]

print(f"# synthetic: {EXPERTS} experts in {GROUPS} hidden groups, top-{TOP_K}, "
      f"{PRIMARY} in the primary group; seed {SEED} (make_clustered_sample.py)")
for _ in range(TOKENS):
    first = rng.choices(range(GROUPS), weights)[0]
    second = rng.choice([g for g in range(GROUPS) if g != first])
    chosen = rng.sample(groups[first], PRIMARY) + rng.sample(groups[second], TOP_K - PRIMARY)
    print(" ".join(str(e) for e in chosen))
