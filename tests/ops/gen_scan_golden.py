#!/usr/bin/python3
"""Writes tests/ops/scan_golden.json: PyTorch 1.13's cumsum, cumprod,
logcumsumexp, cummax and cummin (values, indices and input gradients for a
given output gradient) for tests/ops/scan_test.cpp. Rows short enough to be
one chain must give PyTorch's bits; a row longer than ditto's scan block
(16384) is stored every 97th element (and its last) with the result's
dtype, so the test can say how far the blocked scan is from PyTorch's one
chain.

Run from the repository root with Debian's python3-torch:
    /usr/bin/python3 tests/ops/gen_scan_golden.py
"""
import json
import math
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def enc(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return v


def vals(t, every=1):
    flat = t.reshape(-1)
    if every > 1:
        idx = list(range(0, flat.numel(), every)) + [flat.numel() - 1]
        flat = flat[idx]
    return [enc(v) for v in flat.tolist()]


def inputs():
    g = torch.Generator().manual_seed(0)
    rows = torch.randn(6, 37, generator=g)
    near_one = 1 + 0.25 * (torch.rand(6, 37, generator=g) - 0.5)
    zeros = torch.randint(-2, 3, (5, 23), generator=g).float()
    ties = torch.randint(0, 4, (5, 29), generator=g).float()
    nans = ties.clone()
    nans[torch.rand(5, 29, generator=g) < 0.15] = float("nan")
    special = torch.tensor(
        [[-math.inf, -math.inf, 1.0, math.inf, 2.0, math.inf, math.nan, 3.0],
         [math.inf, 0.5, -math.inf, 4.0, -1.0, 2.0, -3.0, 1.0]])
    long = pattern(40001, 0) * 4
    ints = torch.randint(-(2 ** 30), 2 ** 30, (3, 17), generator=g,
                         dtype=torch.int32)
    bools = torch.rand(4, 9, generator=g) < 0.5
    mid = torch.randn(2, 5, 40, generator=g)
    return {"rows": rows, "near_one": near_one, "zeros": zeros, "ties": ties,
            "nans": nans, "special": special, "long": long, "ints": ints,
            "bools": bools, "mid": mid}


def pattern(n, seed):
    """n values (i * 37 + seed * 11) % 17 / 8 - 1: exact in float32, made
    the same way by scan_test.cpp (the long input and every output
    gradient, which the fixture does not store)."""
    i = torch.arange(n, dtype=torch.int64)
    return ((i * 37 + seed * 11) % 17).float() / 8 - 1


def main():
    xs = inputs()
    cases = []

    def case(name, op, dim, dtype=None, float64=False, grad=True, every=1):
        x = xs[name]
        if float64:
            x = x.double()
        x = x.clone()
        differentiable = grad and x.is_floating_point()
        if differentiable:
            x.requires_grad_(True)
        kwargs = {} if dtype is None else {"dtype": getattr(torch, dtype)}
        fn = getattr(torch, op)
        out = fn(x, dim, **kwargs)
        values, indices = (out.values, out.indices) if op in (
            "cummax", "cummin") else (out, None)
        c = {"input": name, "float64": float64, "op": op, "dim": dim,
             "dtype": dtype, "every": every, "out_dtype": str(values.dtype),
             "values": vals(values.detach(), every)}
        if indices is not None:
            c["indices"] = vals(indices, every)
        if differentiable:
            g = pattern(values.numel(), len(cases)).to(values.dtype)
            values.backward(g.reshape(values.shape))
            c["grad_seed"] = len(cases)
            c["grad_in"] = vals(x.grad, every)
        cases.append(c)

    for f64 in (False, True):
        for op in ("cumsum", "cumprod", "logcumsumexp"):
            src = "near_one" if op == "cumprod" else "rows"
            case(src, op, -1, float64=f64)
            case(src, op, 0, float64=f64)
            case("mid", op, 1, float64=f64)
            case("long", op, 0, float64=f64, every=97)
        case("zeros", "cumprod", 1, float64=f64)
        case("special", "logcumsumexp", 1, float64=f64)
        for op in ("cummax", "cummin"):
            for name in ("rows", "ties", "nans"):
                case(name, op, 1, float64=f64)
            case("mid", op, 1, float64=f64)
    case("rows", "cumsum", 1, dtype="float64")
    for op in ("cumsum", "cumprod"):
        case("ints", op, 1)
        case("ints", op, 1, dtype="int32")
        case("bools", op, 1)
    for op in ("cummax", "cummin"):
        case("ints", op, 1)
        case("bools", op, 1)
    out = {"torch": torch.__version__,
           "inputs": {k: {"sizes": list(v.shape), "dtype": str(v.dtype),
                          "values": vals(v)}
                      for k, v in xs.items() if k != "long"},
           "cases": cases}
    with open(os.path.join(HERE, "scan_golden.json"), "w") as f:
        json.dump(out, f)
        f.write("\n")
    print("wrote", len(cases), "cases")


if __name__ == "__main__":
    main()
