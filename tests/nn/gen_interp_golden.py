#!/usr/bin/python3
"""Writes tests/nn/interp_golden.json: what PyTorch 1.13's
F.interpolate computes in every mode over one, two and three dims (nearest,
nearest-exact, linear, bilinear, bicubic, trilinear, area; align_corners;
scale factors; antialias), forward and input gradient, in float32, for
tests/nn/interp_golden_test.cpp to match bit for bit.

Run from the repository root with Debian's python3-torch:
    ATEN_CPU_CAPABILITY=avx2 /usr/bin/python3 tests/nn/gen_interp_golden.py

PyTorch's interpolation kernels are compiled once per CPU capability, and
GCC contracts their multiply-adds into FMA in the AVX2 build only: the
"default" capability (a CPU without AVX2) gives other bits. ditto computes
the AVX2 build's arithmetic with explicit fma on every CPU; the script
refuses to run under another capability. Inputs come from
torch.manual_seed(0) and randn (float32); values are written with repr of
the float (exact).
"""
import json
import os

import torch
import torch.nn.functional as F

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "interp_golden.json")

# name, input sizes, interpolate kwargs
CASES = [
    ("nearest1d_up", (2, 3, 7), dict(size=17, mode="nearest")),
    ("nearest1d_down_scale", (2, 3, 19), dict(scale_factor=0.4, mode="nearest")),
    ("nearest3d", (1, 2, 3, 4, 5), dict(size=(5, 7, 8), mode="nearest")),
    ("nearest_exact1d", (2, 3, 7), dict(size=12, mode="nearest-exact")),
    ("nearest_exact2d", (2, 2, 5, 6), dict(size=(9, 4), mode="nearest-exact")),
    ("nearest_exact3d_scale", (1, 2, 3, 4, 5),
     dict(scale_factor=(1.5, 2.0, 0.6), mode="nearest-exact")),
    ("linear1d", (2, 3, 7), dict(size=17, mode="linear")),
    ("linear1d_align", (2, 3, 7), dict(size=17, mode="linear", align_corners=True)),
    ("linear1d_down_scale", (2, 3, 19),
     dict(scale_factor=0.45, mode="linear")),
    ("bilinear", (2, 3, 7, 9), dict(size=(13, 17), mode="bilinear")),
    ("bilinear_align", (2, 3, 7, 9),
     dict(size=(13, 5), mode="bilinear", align_corners=True)),
    ("bilinear_scale", (1, 2, 6, 5),
     dict(scale_factor=(2.5, 1.7), mode="bilinear")),
    ("bilinear_recompute", (1, 2, 6, 5),
     dict(scale_factor=(2.5, 1.7), mode="bilinear",
          recompute_scale_factor=True)),
    ("trilinear", (1, 2, 4, 5, 6), dict(size=(7, 9, 11), mode="trilinear")),
    ("trilinear_align_down", (2, 2, 6, 7, 8),
     dict(size=(3, 5, 4), mode="trilinear", align_corners=True)),
    ("trilinear_scale", (1, 2, 3, 4, 5),
     dict(scale_factor=(2.0, 1.5, 2.5), mode="trilinear")),
    ("bicubic", (2, 3, 7, 9), dict(size=(13, 17), mode="bicubic")),
    ("bicubic_align", (2, 3, 7, 9),
     dict(size=(13, 5), mode="bicubic", align_corners=True)),
    ("bicubic_down_scale", (1, 2, 11, 13),
     dict(scale_factor=0.6, mode="bicubic")),
    ("bilinear_aa_down", (2, 2, 17, 19),
     dict(size=(6, 7), mode="bilinear", antialias=True)),
    ("bilinear_aa_align", (1, 2, 17, 19),
     dict(size=(5, 8), mode="bilinear", antialias=True, align_corners=True)),
    ("bilinear_aa_up", (1, 2, 5, 6),
     dict(size=(9, 11), mode="bilinear", antialias=True)),
    ("bicubic_aa_down", (2, 2, 17, 19),
     dict(size=(6, 7), mode="bicubic", antialias=True)),
    ("bicubic_aa_scale", (1, 2, 16, 15),
     dict(scale_factor=0.3, mode="bicubic", antialias=True)),
    ("area1d", (2, 3, 11), dict(size=4, mode="area")),
    ("area3d", (1, 2, 7, 9, 11), dict(size=(3, 4, 5), mode="area")),
]


def values(t):
    return [float(v) for v in t.detach().contiguous().reshape(-1).tolist()]


def main():
    cap = os.environ.get("ATEN_CPU_CAPABILITY")
    if cap != "avx2":
        raise SystemExit("run with ATEN_CPU_CAPABILITY=avx2 (see the docstring)")
    torch.manual_seed(0)
    cases = []
    for name, sizes, kw in CASES:
        x = torch.randn(sizes)
        xi = x.clone().requires_grad_(True)
        y = F.interpolate(xi, **kw)
        g = torch.randn(y.shape)
        y.backward(g)
        cases.append({"name": name, "sizes": list(sizes), "args": kw,
                      "x": values(x), "out_sizes": list(y.shape),
                      "y": values(y), "grad_y": values(g),
                      "grad_x": values(xi.grad)})
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "capability": cap,
                   "cases": cases}, f)
        f.write("\n")
    print("wrote", OUT, len(cases), "cases")


if __name__ == "__main__":
    main()
