"""Writes declared_golden.json: torch 1.13's values and gradients of the
ops declared in ditto/ops/elementwise/elementwise.ops.toml that came with issue 59's
first ops (rsqrt, reciprocal, floor, ceil, trunc, round, frac; fmod and
copysign, with their Scalar overloads and integer forms), as bit patterns,
for test_declared_golden.py. Run with Debian's torch:

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
    # Binary ops: self against other, broadcast rows; fmod's divisors away
    # from zero for the gradient cases.
    A = [5.5, -5.5, 0.0, -0.0, 3.0, -3.0, 1e-30, 7.25, -7.25, 1e10, 2.0, 0.1]
    B = [2.0, 2.0, 3.0, 3.0, -2.0, -2.0, 0.3, -0.5, 0.5, 3.0, -0.0, 0.0]
    for op in ("fmod", "copysign"):
        for dtype in (torch.float32, torch.float64):
            a = torch.tensor(A, dtype=dtype)
            b = torch.tensor(B, dtype=dtype)
            out["cases"].append({
                "op": op, "dtype": str(dtype).split(".")[1], "label": "pairs",
                "a": bits(a), "b": bits(b), "y": bits(getattr(torch, op)(a, b)),
                "y_scalar": bits(getattr(torch, op)(a, -1.5))})
            # b as wide as a: each gradient element is one formula, no sum
            # over a broadcast dim (whose order is each library's own).
            a = torch.tensor(ORDINARY[:24], dtype=dtype).reshape(4, 6)
            b = (torch.tensor(POSITIVE[:24], dtype=dtype) * torch.tensor(
                [1, -1, 1, -1, 1, -1] * 4, dtype=dtype)).reshape(4, 6)
            ag = a.clone().requires_grad_(True)
            bg = b.clone().requires_grad_(True)
            y = getattr(torch, op)(ag, bg)
            g = torch.linspace(-1.0, 1.5, 24, dtype=dtype).reshape(4, 6)
            y.backward(g)
            out["cases"].append({
                "op": op, "dtype": str(dtype).split(".")[1],
                "label": "matrix", "a": bits(a.flatten()),
                "b": bits(b.flatten()), "y": bits(y.detach().flatten()),
                "g": bits(g.flatten()), "da": bits(ag.grad.flatten()),
                "db": bits(bg.grad.flatten()),
                # broadcast: a against b's first row (values only)
                "y_row": bits(getattr(torch, op)(a, b[0]).flatten())})
    ia = torch.tensor([7, -7, 7, -7, 0, 9], dtype=torch.int64)
    ib = torch.tensor([3, 3, -3, -3, 5, 1], dtype=torch.int64)
    out["integer"] = {"fmod": torch.fmod(ia, ib).tolist(),
                      "fmod_scalar": torch.fmod(ia, 4).tolist(),
                      "copysign": torch.copysign(ia, ib).tolist(),
                      "a": ia.tolist(), "b": ib.tolist()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "declared_golden.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(out['cases'])} cases to {path}")


if __name__ == "__main__":
    main()
