#!/usr/bin/python3
"""Writes tests/nn/conv3d_golden.json: what PyTorch 1.13 computes for
conv3d and conv_transpose3d (outputs and the gradients of input, weight and
bias for a given output gradient) and the initial parameters of Conv3d and
ConvTranspose3d, for tests/nn/conv3d_golden_test.cpp.

Run from the repository root with Debian's python3-torch:
    /usr/bin/python3 tests/nn/gen_conv3d_golden.py

Values are float64 (the "values" cases) written with Python's repr (exact);
each case holds the op, its arguments, the input, weight, bias and output
gradient (torch.manual_seed(0) then randn, in that order per case), the
output and the three gradients. PyTorch's float64 convolutions sum in
their own order, so the test compares within a small relative bound. The
"init" cases hold the float32 parameters PyTorch draws after
torch.manual_seed(seed) (compared bit for bit) and the layer's repr.
"""
import json
import os

import torch
import torch.nn.functional as F

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "conv3d_golden.json")


def values(t):
    return [float(v) for v in t.detach().contiguous().reshape(-1).tolist()]


CONV = [
    # (name, input, weight, kwargs): unit strides (ditto's implicit GEMM
    # and, in float32, direct tiles), strides, dilation, groups, padding
    # past the kernel's reach, a 1x1x1 kernel.
    ("unit_stride", (2, 3, 5, 6, 4), (4, 3, 3, 3, 3), dict(padding=1)),
    ("wide", (1, 2, 3, 4, 4), (17, 2, 3, 2, 3), dict(padding=(1, 0, 2))),
    ("stride_dilation_groups", (1, 4, 7, 6, 9), (6, 2, 2, 3, 2),
     dict(stride=(2, 1, 3), padding=(1, 0, 2), dilation=(1, 2, 1), groups=2)),
    ("padding_past_reach", (1, 2, 3, 2, 3), (3, 2, 2, 2, 2), dict(padding=(3, 1, 2))),
    ("pointwise", (2, 3, 4, 3, 5), (5, 3, 1, 1, 1), dict()),
    ("stride2", (1, 3, 8, 7, 6), (4, 3, 3, 3, 3), dict(stride=2, padding=1)),
]
TRANSPOSED = [
    ("stride2_output_padding", (1, 4, 3, 2, 3), (4, 3, 3, 3, 3),
     dict(stride=2, padding=1, output_padding=1)),
    ("groups_dilation", (1, 4, 3, 4, 5), (4, 2, 2, 3, 2),
     dict(stride=(1, 2, 1), padding=(0, 1, 0), groups=2, dilation=(2, 1, 1))),
    ("unit_stride", (1, 2, 4, 3, 4), (2, 3, 3, 3, 3), dict(padding=1)),
]
INIT = [
    ("conv3d_4_8_3", lambda: torch.nn.Conv3d(4, 8, 3, padding=1)),
    ("conv3d_6_4_k232_g2", lambda: torch.nn.Conv3d(6, 4, (2, 3, 2), stride=2,
                                                   groups=2, bias=False)),
    ("convtranspose3d_4_6_3_s2",
     lambda: torch.nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1,
                                      output_padding=1)),
    ("convtranspose3d_4_6_k213_g2",
     lambda: torch.nn.ConvTranspose3d(4, 6, (2, 1, 3), groups=2,
                                      dilation=(1, 2, 1))),
]


def case(name, op, xs, ws, kw, transposed):
    torch.manual_seed(0)
    x = torch.randn(xs, dtype=torch.float64, requires_grad=True)
    w = torch.randn(ws, dtype=torch.float64, requires_grad=True)
    cout = ws[1] * kw.get("groups", 1) if transposed else ws[0]
    b = torch.randn(cout, dtype=torch.float64, requires_grad=True)
    y = op(x, w, b, **kw)
    gy = torch.randn(y.shape, dtype=torch.float64)
    gx, gw, gb = torch.autograd.grad(y, (x, w, b), gy)
    return {"name": name, "args": kw, "x_sizes": list(xs),
            "w_sizes": list(ws), "x": values(x), "w": values(w),
            "b": values(b), "y_sizes": list(y.shape), "y": values(y),
            "grad_y": values(gy), "grad_x": values(gx), "grad_w": values(gw),
            "grad_b": values(gb)}


def main():
    out = {"conv3d": [case(n, F.conv3d, xs, ws, kw, False)
                      for n, xs, ws, kw in CONV],
           "conv_transpose3d": [case(n, F.conv_transpose3d, xs, ws, kw, True)
                                for n, xs, ws, kw in TRANSPOSED],
           "init": []}
    for name, make in INIT:
        for seed in (0, 1234):
            torch.manual_seed(seed)
            m = make()
            out["init"].append({
                "name": name, "seed": seed, "repr": repr(m),
                "weight_sizes": list(m.weight.shape),
                "weight": values(m.weight),
                "bias": None if m.bias is None else values(m.bias)})
    with open(OUT, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
