#!/usr/bin/python3
"""Writes tests/ops/svd_golden.json: torch.svd_lowrank's singular values
(PyTorch 1.13, float64) for matrices A[i][j] = ((7 i + 13 j) % 17 - 8) / 4
(exact in binary) after torch.manual_seed(seed), for the C++ test
(decomp_test.cpp) to compare within rounding.

    /usr/bin/python3 tests/ops/gen_svd_golden.py
"""
import json
import os

import torch


def matrix(m, n):
    i = torch.arange(m, dtype=torch.int64)[:, None]
    j = torch.arange(n, dtype=torch.int64)[None, :]
    return (((7 * i + 13 * j) % 17) - 8).to(torch.float64) / 4


cases = []
for m, n, q, niter, seed in ((30, 20, 5, 2, 0), (12, 40, 6, 1, 1),
                              (25, 4, 4, 2, 2), (50, 50, 8, 0, 3)):
    torch.manual_seed(seed)
    U, S, V = torch.svd_lowrank(matrix(m, n), q=q, niter=niter)
    cases.append({"m": m, "n": n, "q": q, "niter": niter, "seed": seed,
                  "S": S.tolist(),
                  "after": torch.rand(1, dtype=torch.float64).item()})
path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "svd_golden.json")
with open(path + ".tmp", "w") as f:
    json.dump({"generated_by": "gen_svd_golden.py, torch " + torch.__version__,
               "cases": cases}, f, indent=1)
os.replace(path + ".tmp", path)
