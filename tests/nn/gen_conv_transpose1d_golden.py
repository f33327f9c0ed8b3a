#!/usr/bin/python3
"""Golden values for ConvTranspose1d (tests/nn/layers_test.cpp,
NnLayers.ConvTranspose1dIsPyTorchs) from PyTorch 1.13:
  /usr/bin/python3 tests/nn/gen_conv_transpose1d_golden.py
writes tests/nn/conv_transpose1d_golden.json: the initial float32
parameters after manual_seed(0) (bit for bit), the repr, and a float64
forward with its gradients."""
import json
import os

import torch
import torch.nn as nn


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def main():
    out = {}
    torch.manual_seed(0)
    ct = nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1,
                            groups=2)
    out["init"] = {"w": flat(ct.weight), "w_shape": list(ct.weight.shape),
                   "b": flat(ct.bias), "repr": repr(ct)}
    torch.manual_seed(0)
    plain = nn.ConvTranspose1d(3, 5, 2, bias=False, dilation=2)
    out["plain"] = {"w": flat(plain.weight), "w_shape": list(plain.weight.shape),
                    "repr": repr(plain)}
    ct = ct.double()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 4, 7, generator=g, dtype=torch.float64,
                    requires_grad=True)
    y = ct(x)
    r = torch.randn(y.shape, generator=g, dtype=torch.float64)
    (y * r).sum().backward()
    out["forward"] = {"x": flat(x), "y": flat(y), "shape": list(y.shape),
                      "r": flat(r), "grad_x": flat(x.grad),
                      "grad_w": flat(ct.weight.grad), "grad_b": flat(ct.bias.grad)}
    # Unbatched input (C, L).
    x1 = torch.randn(4, 5, generator=g, dtype=torch.float64)
    out["unbatched"] = {"x": flat(x1), "y": flat(ct(x1)),
                        "shape": list(ct(x1).shape)}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "conv_transpose1d_golden.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
