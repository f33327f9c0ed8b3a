#!/usr/bin/python3
"""Writes tests/nn/norm_golden.json: what PyTorch 1.13's BatchNorm3d and
InstanceNorm1d/2d/3d compute, in float32, for tests/nn/norm_golden_test.cpp
to match bit for bit: per case the layer's arguments, the input, the output
in training mode, the input's gradient for a given output gradient, the
parameters' gradients (affine), the running statistics after the step, and
the output in eval mode after it; and how the layers print.

Run from the repository root with Debian's python3-torch:
    /usr/bin/python3 tests/nn/gen_norm_golden.py

Inputs and gradients come from torch.manual_seed(0) and randn; values are
written with repr of the float (exact).
"""
import json
import os

import torch
import torch.nn as nn

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "norm_golden.json")

# layer, num_features, kwargs, input sizes
CASES = [
    ("BatchNorm3d", 3, {}, (2, 3, 4, 5, 6)),
    ("BatchNorm3d", 2, dict(affine=False, momentum=0.3), (3, 2, 3, 4, 5)),
    ("InstanceNorm1d", 3, {}, (2, 3, 17)),
    ("InstanceNorm1d", 4, dict(affine=True), (4, 11)),
    ("InstanceNorm2d", 3, dict(affine=True, track_running_stats=True),
     (2, 3, 7, 9)),
    ("InstanceNorm2d", 2, dict(eps=1e-3), (3, 2, 5, 6)),
    ("InstanceNorm3d", 2, dict(affine=True, track_running_stats=True,
                               momentum=0.2), (2, 2, 4, 5, 6)),
    ("InstanceNorm3d", 3, {}, (3, 4, 5, 6)),
]


def values(t):
    return [float(v) for v in t.detach().contiguous().reshape(-1).tolist()]


def main():
    torch.manual_seed(0)
    cases = []
    for name, c, kw, sizes in CASES:
        layer = getattr(nn, name)(c, **kw)
        if getattr(layer, "weight", None) is not None:
            with torch.no_grad():
                layer.weight.copy_(torch.randn(c))
                layer.bias.copy_(torch.randn(c))
        x = torch.randn(sizes, requires_grad=True)
        layer.train()
        y = layer(x)
        g = torch.randn(y.shape)
        y.backward(g)
        case = {"layer": name, "num_features": c, "args": kw,
                "sizes": list(sizes), "x": values(x), "y": values(y),
                "grad_y": values(g), "grad_x": values(x.grad),
                "repr": repr(layer)}
        if layer.weight is not None:
            case["weight"] = values(layer.weight)
            case["bias"] = values(layer.bias)
            case["grad_weight"] = values(layer.weight.grad)
            case["grad_bias"] = values(layer.bias.grad)
        if layer.running_mean is not None:
            case["running_mean"] = values(layer.running_mean)
            case["running_var"] = values(layer.running_var)
        layer.eval()
        case["y_eval"] = values(layer(x))
        cases.append(case)
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f)
        f.write("\n")
    print("wrote", OUT, len(cases), "cases")


if __name__ == "__main__":
    main()
