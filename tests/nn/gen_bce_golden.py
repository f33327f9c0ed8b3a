"""Makes tests/nn/bce_golden.json from PyTorch 1.13: binary_cross_entropy's
loss and its gradients with respect to input and target, with inputs that
are exactly 0 and 1 (where torch's gradient divides by max((1 - x) x,
1e-12) and stays finite) and inside (0, 1). Run with Debian's torch:

    /usr/bin/python3 tests/nn/gen_bce_golden.py > tests/nn/bce_golden.json

Infinities are written as the strings "inf" and "-inf" (JSON has none).
"""
import json
import math

import torch
import torch.nn.functional as F


def listed(t):
    return [v if math.isfinite(v) else ("inf" if v > 0 else "-inf")
            for v in t.detach().flatten().double().tolist()]


def main():
    x = [0.0, 1.0, 0.5, 1e-30, 0.25, 0.999, 1.0, 0.0, 0.7, 0.125, 0.9, 0.3]
    t = [1.0, 0.0, 0.3, 1.0, 0.25, 0.0, 1.0, 0.0, 1.0, 0.5, 0.2, 0.0]
    w = [2.0, 3.0, 1.0, 0.5]
    out = {"input": x, "target": t, "weight": w, "cases": []}
    for dtype in (torch.float32, torch.float64):
        for reduction in ("mean", "sum", "none"):
            for weighted in (False, True):
                xi = torch.tensor(x, dtype=dtype).reshape(3, 4)
                xi.requires_grad_()
                ti = torch.tensor(t, dtype=dtype).reshape(3, 4)
                ti.requires_grad_()
                wi = torch.tensor(w, dtype=dtype) if weighted else None
                loss = F.binary_cross_entropy(xi, ti, weight=wi,
                                              reduction=reduction)
                # A gradient of the output that is not all ones.
                g = torch.linspace(0.5, 2.0, loss.numel(), dtype=dtype)
                loss.backward(g.reshape(loss.shape))
                out["cases"].append({
                    "dtype": str(dtype).replace("torch.", ""),
                    "reduction": reduction, "weighted": weighted,
                    "grad_output": listed(g), "loss": listed(loss),
                    "grad_input": listed(xi.grad),
                    "grad_target": listed(ti.grad)})
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
