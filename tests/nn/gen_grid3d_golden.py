#!/usr/bin/python3
"""Writes tests/nn/grid3d_golden.json: PyTorch 1.13's grid_sample on
volumes (input (N, C, D, H, W), grid (N, Do, Ho, Wo, 3)) in float32, every
mode, padding mode and align_corners: the output and the gradients of input
and grid for a given output gradient, for
tests/nn/grid3d_golden_test.cpp to match bit for bit.

Run from the repository root with Debian's python3-torch:
    /usr/bin/python3 tests/nn/gen_grid3d_golden.py

Values are float32 written with Python's repr of the float (exact). The
grid reaches past [-1, 1] (the padding modes matter) and the input is
rounded to multiples of 1/64.
"""
import json
import os

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "grid3d_golden.json")


def values(t):
    return [float(v) for v in t.detach().contiguous().reshape(-1).tolist()]


def main():
    torch.manual_seed(0)
    cases = []
    for mode in ("bilinear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            for align in (False, True):
                x = torch.round(torch.randn(2, 2, 3, 4, 5) * 64) / 64
                g = torch.rand(2, 2, 3, 2, 3) * 2.6 - 1.3
                xi = x.clone().requires_grad_(True)
                gi = g.clone().requires_grad_(True)
                y = F.grid_sample(xi, gi, mode=mode, padding_mode=pad,
                                  align_corners=align)
                go = torch.round(torch.randn(y.shape) * 64) / 64
                y.backward(go)
                cases.append({
                    "mode": mode, "padding_mode": pad, "align_corners": align,
                    "x_sizes": list(x.shape), "grid_sizes": list(g.shape),
                    "x": values(x), "grid": values(g), "y": values(y),
                    "grad_y": values(go), "grad_x": values(xi.grad),
                    "grad_grid": values(gi.grad)})
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
