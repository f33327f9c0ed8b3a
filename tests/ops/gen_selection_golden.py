#!/usr/bin/python3
"""Writes tests/ops/selection_golden.json: PyTorch 1.13's kthvalue,
median, nanmedian, mode and topk (values and indices) and quantile and
nanquantile (every interpolation) on rows with many
ties and with NaNs, for tests/ops/selection_test.cpp: the index PyTorch
returns among tied values is its algorithm's (quickselect, nth_element,
std::sort), and ditto's must be the same.

Run from the repository root with Debian's python3-torch:
    /usr/bin/python3 tests/ops/gen_selection_golden.py
"""
import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs():
    g = torch.Generator().manual_seed(0)
    ties = torch.randint(0, 5, (6, 37), generator=g).float()
    nans = torch.randn(6, 37, generator=g)
    nans[torch.rand(6, 37, generator=g) < 0.2] = float("nan")
    long = torch.randint(0, 50, (3, 700), generator=g).float()
    return {"ties": ties, "nans": nans, "long": long,
            "ints": torch.randint(-3, 4, (4, 29), generator=g)}


def vals(t):
    return [None if v != v else v for v in t.reshape(-1).tolist()]


def main():
    cases = []
    for name, x in inputs().items():
        n = x.size(-1)
        calls = []
        for k in (1, 2, n // 2, n - 1, n):
            calls.append(("kthvalue", {"k": k}, torch.kthvalue(x, k, -1)))
        calls.append(("kthvalue_dim0", {"k": 2}, torch.kthvalue(x, 2, 0)))
        calls.append(("median", {}, torch.median(x, -1)))
        calls.append(("median_dim0", {}, torch.median(x, 0)))
        if x.is_floating_point():
            calls.append(("nanmedian", {}, torch.nanmedian(x, -1)))
        calls.append(("mode", {}, torch.mode(x, -1)))
        for k in (1, 3, n // 2 + 1):
            for largest in (True, False):
                for sorted_ in (True, False):
                    calls.append(("topk", {"k": k, "largest": largest,
                                           "sorted": sorted_},
                                  torch.topk(x, k, -1, largest, sorted_)))
        if x.is_floating_point():
            for mode in ("linear", "lower", "higher", "nearest", "midpoint"):
                for q in ([0.3], [0.0, 0.1, 0.25, 0.5, 0.7, 0.9, 1.0]):
                    qt = torch.tensor(q)
                    for nan in (False, True):
                        fn = torch.nanquantile if nan else torch.quantile
                        args = {"q": q, "interp": mode, "nan": nan}
                        calls.append(("quantile", args,
                                      (fn(x, qt, -1, interpolation=mode),
                                       torch.tensor([], dtype=torch.int64))))
                        calls.append(("quantile_all", args,
                                      (fn(x, qt, interpolation=mode),
                                       torch.tensor([], dtype=torch.int64))))
        for op, args, (v, i) in calls:
            cases.append({"input": name, "op": op, "args": args,
                          "values": vals(v), "indices": i.reshape(-1).tolist()})
        all_ = [("median_all", torch.median(x))]
        if x.is_floating_point():
            all_.append(("nanmedian_all", torch.nanmedian(x)))
        for op, v in all_:
            cases.append({"input": name, "op": op, "args": {},
                          "values": vals(v), "indices": []})
    out = {"torch": torch.__version__,
           "inputs": {k: {"sizes": list(v.shape), "values": vals(v),
                          "int": not v.is_floating_point()}
                      for k, v in inputs().items()},
           "cases": cases}
    with open(os.path.join(HERE, "selection_golden.json"), "w") as f:
        json.dump(out, f)
        f.write("\n")
    print("wrote", len(cases), "cases")


if __name__ == "__main__":
    main()
