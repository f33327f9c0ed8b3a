#!/usr/bin/python3
"""Writes tests/nn/pool_golden.json: what PyTorch 1.13 computes for the
poolings over one, two and three spatial dims (max, average, adaptive
average, adaptive max, max unpooling), forward and backward, in float32, for
tests/nn/pool_golden_test.cpp to match bit for bit.

Run from the repository root with Debian's python3-torch:
    /usr/bin/python3 tests/nn/gen_pool_golden.py

Each case holds the op, its arguments, the input (sizes and values), the
output (and indices where the op gives them; the cases of op "pad" are
F.pad in every mode over one and three dims), a gradient of the output
and the input's gradient ("repr_layers", "repr_pads": how the pooling and padding layers print). Values are float32 written with Python's repr of
the float (exact); null stands for NaN. Inputs come from
torch.manual_seed(0) and randn, rounded to multiples of 1/64 so that ties
happen, with a NaN planted in the cases named "nan".
"""
import json
import os

import torch
import torch.nn.functional as F

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "pool_golden.json")


def values(t):
    return [None if v != v else float(v)
            for v in t.detach().contiguous().reshape(-1).tolist()]


def make_input(sizes, nan=False):
    x = torch.round(torch.randn(sizes) * 64) / 64
    if nan:
        x.view(-1)[5] = float("nan")
    return x


CASES = [
    # name, op, input sizes, kwargs, nan
    ("max1d_k3_s2_p1", "max_pool1d", (2, 3, 11),
     dict(kernel_size=3, stride=2, padding=1), False),
    ("max1d_dilated_ceil", "max_pool1d", (2, 3, 12),
     dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True), False),
    ("max1d_nan", "max_pool1d", (3, 9), dict(kernel_size=2), True),
    ("max3d_k3_s2_p1", "max_pool3d", (2, 2, 5, 6, 7),
     dict(kernel_size=3, stride=2, padding=1), False),
    ("max3d_mixed_ceil", "max_pool3d", (1, 3, 6, 5, 9),
     dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0),
          dilation=(1, 1, 2), ceil_mode=True), False),
    ("max3d_overlap_nobatch", "max_pool3d", (2, 4, 5, 6),
     dict(kernel_size=3, stride=1), False),
    ("max3d_nan", "max_pool3d", (1, 2, 4, 4, 4), dict(kernel_size=2), True),
    ("avg1d_k3_s2_p1", "avg_pool1d", (2, 3, 11),
     dict(kernel_size=3, stride=2, padding=1), False),
    ("avg1d_ceil_exclude", "avg_pool1d", (2, 3, 12),
     dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
          count_include_pad=False), False),
    ("avg3d_k3_s2_p1", "avg_pool3d", (2, 2, 5, 6, 7),
     dict(kernel_size=3, stride=2, padding=1), False),
    ("avg3d_ceil_exclude", "avg_pool3d", (1, 3, 6, 5, 9),
     dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0),
          ceil_mode=True, count_include_pad=False), False),
    ("avg3d_divisor", "avg_pool3d", (2, 4, 5, 6),
     dict(kernel_size=(3, 2, 2), stride=1, divisor_override=5), False),
    ("adaptive_avg1d_4", "adaptive_avg_pool1d", (2, 3, 11),
     dict(output_size=4), False),
    ("adaptive_avg1d_larger", "adaptive_avg_pool1d", (2, 3, 5),
     dict(output_size=7), False),
    ("adaptive_avg3d_3_4_5", "adaptive_avg_pool3d", (2, 2, 7, 9, 11),
     dict(output_size=(3, 4, 5)), False),
    ("adaptive_avg3d_larger_nobatch", "adaptive_avg_pool3d", (2, 3, 5, 4),
     dict(output_size=(5, 4, 7)), False),
    ("adaptive_max1d_4", "adaptive_max_pool1d", (2, 3, 11),
     dict(output_size=4), False),
    ("adaptive_max2d_3_4", "adaptive_max_pool2d", (2, 3, 9, 11),
     dict(output_size=(3, 4)), False),
    ("adaptive_max2d_larger_nan", "adaptive_max_pool2d", (2, 5, 4),
     dict(output_size=(7, 6)), True),
    ("adaptive_max3d_3_4_5", "adaptive_max_pool3d", (2, 2, 7, 9, 11),
     dict(output_size=(3, 4, 5)), False),
    ("adaptive_max3d_nobatch_nan", "adaptive_max_pool3d", (2, 3, 5, 4),
     dict(output_size=(2, 3, 3)), True),
]

# max_unpoolNd of max_poolNd's result: name, dims, input sizes, pool kwargs,
# output_size (or None).
UNPOOL = [
    ("unpool1d", 1, (2, 3, 12), dict(kernel_size=2), None),
    ("unpool1d_overlap_size", 1, (2, 3, 11), dict(kernel_size=3, stride=2),
     [2, 3, 12]),
    ("unpool2d", 2, (2, 3, 6, 8), dict(kernel_size=2), None),
    ("unpool2d_overlap_size", 2, (2, 2, 7, 9),
     dict(kernel_size=3, stride=2, padding=1), [7, 9]),
    ("unpool3d", 3, (2, 2, 4, 6, 4), dict(kernel_size=2), None),
    ("unpool3d_overlap_nobatch", 3, (2, 5, 5, 7),
     dict(kernel_size=3, stride=2), [5, 6, 7]),
]


def run_case(name, op, sizes, kw, nan):
    x = make_input(sizes, nan)
    xi = x.clone().requires_grad_(True)
    fn = getattr(F, op)
    case = {"name": name, "op": op, "args": kw, "sizes": list(sizes),
            "x": values(x)}
    if op.startswith("max_pool") or op.startswith("adaptive_max"):
        y, idx = fn(xi, return_indices=True, **kw)
        case["indices"] = idx.reshape(-1).tolist()
    else:
        y = fn(xi, **kw)
    g = make_input(tuple(y.shape))
    y.backward(g)
    case["out_sizes"] = list(y.shape)
    case["y"] = values(y)
    case["grad_y"] = values(g)
    case["grad_x"] = values(xi.grad)
    return case


def run_unpool(name, dims, sizes, kw, output_size):
    pool = getattr(F, "max_pool%dd" % dims)
    unpool = getattr(F, "max_unpool%dd" % dims)
    x = make_input(sizes)
    y, idx = pool(x, return_indices=True, **kw)
    yi = y.clone().requires_grad_(True)
    args = dict(kernel_size=kw["kernel_size"])
    if "stride" in kw:
        args["stride"] = kw["stride"]
    if "padding" in kw:
        args["padding"] = kw["padding"]
    if output_size is not None:
        args["output_size"] = output_size
    z = unpool(yi, idx, **args)
    g = make_input(tuple(z.shape))
    z.backward(g)
    return {"name": name, "op": "max_unpool%dd" % dims, "args": args,
            "sizes": list(y.shape), "x": values(y),
            "indices": idx.reshape(-1).tolist(), "out_sizes": list(z.shape),
            "y": values(z), "grad_y": values(g), "grad_x": values(yi.grad)}


# F.pad in the non-constant modes over one and three dims (and constant):
# name, input sizes, pad, mode, value.
PADS = [
    ("reflect1d", (2, 3, 9), (3, 2), "reflect", 0.0),
    ("replicate1d", (3, 7), (4, 1), "replicate", 0.0),
    ("reflect3d", (1, 2, 4, 5, 6), (1, 2, 2, 1, 3, 0), "reflect", 0.0),
    ("replicate3d", (2, 1, 3, 4, 5), (2, 3, 1, 0, 4, 2), "replicate", 0.0),
    ("constant3d", (2, 3, 4, 5), (1, 0, 2, 1, 0, 3), "constant", 1.5),
]


def run_pad(name, sizes, pad, mode, value):
    x = make_input(sizes)
    xi = x.clone().requires_grad_(True)
    y = F.pad(xi, pad, mode=mode, value=value)
    g = make_input(tuple(y.shape))
    y.backward(g)
    return {"name": name, "op": "pad", "args": {"pad": list(pad),
            "mode": mode, "value": value}, "sizes": list(sizes),
            "x": values(x), "out_sizes": list(y.shape), "y": values(y),
            "grad_y": values(g), "grad_x": values(xi.grad)}


# Fractional max pooling: name, dims, input sizes, kwargs, seed. The cases
# with a seed draw their samples from the default generator right after
# torch.manual_seed(seed) (as the C++ test does); the others pass
# "random_samples" (torch.rand after the inputs). Appended after every other
# case, so that their inputs are unchanged.
FRACTIONAL = [
    ("fractional2d_size", 2, (2, 3, 9, 11),
     dict(kernel_size=3, output_size=(4, 5)), None),
    ("fractional2d_ratio_overlap", 2, (2, 2, 10, 8),
     dict(kernel_size=(3, 2), output_ratio=(0.7, 0.5)), None),
    ("fractional2d_nobatch_seeded", 2, (3, 7, 9),
     dict(kernel_size=2, output_size=(4, 6)), 7),
    ("fractional2d_nan", 2, (1, 2, 6, 6), dict(kernel_size=2, output_size=3),
     None),
    ("fractional3d_size", 3, (2, 2, 7, 6, 8),
     dict(kernel_size=(2, 3, 2), output_size=(3, 2, 4)), None),
    ("fractional3d_seeded", 3, (1, 3, 6, 7, 5),
     dict(kernel_size=2, output_ratio=0.6), 11),
]


def run_fractional(name, dims, sizes, kw, seed):
    x = make_input(sizes, nan=name.endswith("nan"))
    xi = x.clone().requires_grad_(True)
    fn = getattr(F, "fractional_max_pool%dd" % dims)
    case = {"name": name, "op": "fractional_max_pool%dd" % dims,
            "args": dict(kw), "sizes": list(sizes), "x": values(x)}
    if seed is None:
        batch = 1 if xi.dim() == dims + 1 else xi.size(0)
        u = torch.rand(batch, xi.size(-dims - 1), dims)
        case["random_samples"] = values(u)
        y, idx = fn(xi, return_indices=True, _random_samples=u, **kw)
    else:
        case["seed"] = seed
        torch.manual_seed(seed)
        y, idx = fn(xi, return_indices=True, **kw)
    case["indices"] = idx.reshape(-1).tolist()
    g = make_input(tuple(y.shape))
    y.backward(g)
    case["out_sizes"] = list(y.shape)
    case["y"] = values(y)
    case["grad_y"] = values(g)
    case["grad_x"] = values(xi.grad)
    return case


def main():
    torch.manual_seed(0)
    cases = [run_case(*c) for c in CASES] + [run_unpool(*u) for u in UNPOOL]
    cases += [run_pad(*p) for p in PADS]
    cases += [run_fractional(*c) for c in FRACTIONAL]
    nn = torch.nn
    layers = nn.Sequential(
        nn.MaxPool1d(3), nn.MaxPool3d(3, 2, 1), nn.AvgPool1d(3),
        nn.AvgPool3d(3), nn.AvgPool3d((3, 2, 2), divisor_override=2),
        nn.AdaptiveAvgPool1d(3), nn.AdaptiveAvgPool3d((1, 2, 3)),
        nn.AdaptiveMaxPool1d(3), nn.AdaptiveMaxPool2d((3, 4)),
        nn.AdaptiveMaxPool3d(2), nn.MaxUnpool1d(2), nn.MaxUnpool2d(2),
        nn.MaxUnpool3d(2, 1, 1), nn.FractionalMaxPool2d(2, output_size=3),
        nn.FractionalMaxPool3d((2, 3, 2), output_ratio=0.5))
    pads = nn.Sequential(
        nn.ReflectionPad1d(2), nn.ReflectionPad1d((1, 2)), nn.ReflectionPad3d(1),
        nn.ReplicationPad1d(3), nn.ReplicationPad2d((1, 2, 3, 4)),
        nn.ReplicationPad3d((1, 2, 3, 4, 5, 6)), nn.ConstantPad1d(2, 3.5),
        nn.ConstantPad2d(1, 0.0), nn.ConstantPad3d(1, -1.25), nn.ZeroPad2d(1))
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases,
                   "repr_layers": repr(layers), "repr_pads": repr(pads)}, f)
        f.write("\n")
    print("wrote", OUT, len(cases), "cases")


if __name__ == "__main__":
    main()
