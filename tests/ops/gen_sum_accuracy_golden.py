"""Makes tests/ops/sum_accuracy_golden.json: PyTorch 1.13's float32 sum of
data sets of one and two magnitudes, and the exact sum of the same float32
values, so that tests/ops/reduce_test.cpp can check that ditto's sum is at
least as accurate as torch's. The data come from an integer LCG (the test
makes the same values): k = the top 24 bits of the state, value
k * 2^scale with the scale of the element's level. Run with Debian's torch:

    /usr/bin/python3 tests/ops/gen_sum_accuracy_golden.py > tests/ops/sum_accuracy_golden.json
"""
import json
import math

import numpy as np
import torch

MASK = (1 << 64) - 1


def values(n, scales, seed):
    """Element i: k_i * 2^scales[i % len(scales)]."""
    ks = np.empty(n, dtype=np.float64)
    s = seed
    for i in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) & MASK
        ks[i] = s >> 40
    sc = np.array([scales[i % len(scales)] for i in range(len(scales))])
    ex = np.resize(sc, n)
    return np.ldexp(ks, ex.astype(np.int64)).astype(np.float32)


CASES = [
    # (name, n, scales, seed)
    ("one_level_1M", 1 << 20, [-24], 1),
    ("two_levels_1M", 1000000, [-17, -34], 2),
    ("two_levels_runs", 300000, [-10, -10, -10, -40], 3),
    ("ten_per_mille_big", 65536 * 3 + 77, [-30] * 9 + [-8], 4),
]


def main():
    torch.set_num_threads(1)
    out = []
    for name, n, scales, seed in CASES:
        v = values(n, scales, seed)
        t = torch.from_numpy(v)
        out.append({
            "name": name, "n": n, "scales": scales, "seed": seed,
            "torch": float(t.sum().item()),
            "exact": math.fsum(v.astype(np.float64).tolist())})
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
