"""Writes declared_golden.json: torch 1.13's values and gradients of the
unary ops declared in ditto/ops/elementwise.ops.toml that came with issue
59's first ops (rsqrt, reciprocal, floor, ceil, trunc, round, frac), as
bit patterns, for test_declared_golden.py. Run with Debian's torch:

    /usr/bin/python3 tests/python/gen_declared_golden.py
"""
import json
import math
import os

import torch

OPS = ["rsqrt", "reciprocal", "floor", "ceil", "trunc", "round", "frac"]

# Ties (round's halves), signed zeros, values past 2^23 / 2^52 (already
# integral), tiny and huge, infinities and NaN, and ordinary values.
SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 1e-30, -1e-30,
           8388607.5, 8388609.0, 4503599627370495.5, 1e300, -1e300,
           math.inf, -math.inf, math.nan, 0.1, -0.1, 0.7, -0.7, 2.0, 1.0,
           3.0000001, 123.456, -123.456, 1e-5, 65504.25]
ORDINARY = [((i * 7919) % 1000) / 97.0 - 5.0 for i in range(60)]
POSITIVE = [0.05 + ((i * 104729) % 1000) / 137.0 for i in range(60)]


def bits(t):
    if t.dtype == torch.float32:
        return t.view(torch.int32).tolist()
    return t.view(torch.int64).tolist()


def main():
    out = {"torch": torch.__version__, "cases": []}
    for op in OPS:
        for dtype in (torch.float32, torch.float64):
            for label, values in (("special", SPECIAL), ("ordinary", ORDINARY),
                                  ("positive", POSITIVE)):
                x = torch.tensor(values, dtype=dtype)
                y = getattr(torch, op)(x)
                case = {"op": op, "dtype": str(dtype).split(".")[1],
                        "label": label, "x": bits(x), "y": bits(y)}
                if label != "special":
                    xg = x.clone().requires_grad_(True)
                    g = torch.linspace(-1.0, 1.5, len(values), dtype=dtype)
                    getattr(torch, op)(xg).backward(g)
                    case["g"] = bits(g)
                    case["dx"] = bits(xg.grad)
                out["cases"].append(case)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "declared_golden.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(out['cases'])} cases to {path}")


if __name__ == "__main__":
    main()
