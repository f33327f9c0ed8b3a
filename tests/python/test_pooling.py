"""The poolings over one, two and three dims, max unpooling and padding from
Python:
torch's argument names and defaults, the outputs and gradients of the
PyTorch 1.13 fixture (tests/nn/pool_golden.json, bit for bit in float32),
the layers' printed forms, and the errors."""
import json
import os
import struct

import pytest

import ditto
import ditto.nn as nn
import ditto.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "nn", "pool_golden.json")


def golden():
    with open(GOLDEN) as f:
        return json.load(f)


def f32(values, shape):
    nan = float("nan")
    return ditto.tensor([nan if v is None else v for v in values],
                        dtype=ditto.float64).float().reshape(shape)


def bits(t):
    return [struct.pack("<f", v) if v == v else b"nan"
            for v in t.detach().contiguous().reshape(-1).tolist()]


def want_bits(values):
    return [b"nan" if v is None else struct.pack("<f", v) for v in values]


def call(case, x):
    op, a = case["op"], dict(case["args"])
    if op.startswith("max_unpool"):
        idx = ditto.tensor(case["indices"]).reshape(case["sizes"])
        return getattr(F, op)(x, idx, **a), None
    if op.startswith("fractional"):
        n = 2 if op.endswith("2d") else 3
        if "random_samples" in case:
            batch = 1 if x.dim() == n + 1 else x.shape[0]
            a["_random_samples"] = f32(case["random_samples"],
                                       [batch, x.shape[-n - 1], n])
        else:
            ditto.manual_seed(case["seed"])
        return getattr(F, op)(x, return_indices=True, **a)
    if op.startswith("max_pool") or op.startswith("adaptive_max"):
        return getattr(F, op)(x, return_indices=True, **a)
    return getattr(F, op)(x, **a), None


def test_every_fixture_case_from_python():
    cases = golden()["cases"]
    assert len(cases) >= 32
    for case in cases:
        x = f32(case["x"], case["sizes"]).requires_grad_(True)
        y, idx = call(case, x)
        assert list(y.shape) == case["out_sizes"], case["name"]
        assert bits(y) == want_bits(case["y"]), case["name"]
        if idx is not None:
            assert idx.reshape(-1).tolist() == case["indices"], case["name"]
        y.backward(f32(case["grad_y"], case["out_sizes"]))
        assert bits(x.grad) == want_bits(case["grad_x"]), case["name"]


def test_layers_print_as_pytorchs():
    layers = nn.Sequential(
        nn.MaxPool1d(3), nn.MaxPool3d(3, 2, 1), nn.AvgPool1d(3),
        nn.AvgPool3d(3), nn.AvgPool3d((3, 2, 2), divisor_override=2),
        nn.AdaptiveAvgPool1d(3), nn.AdaptiveAvgPool3d((1, 2, 3)),
        nn.AdaptiveMaxPool1d(3), nn.AdaptiveMaxPool2d((3, 4)),
        nn.AdaptiveMaxPool3d(2), nn.MaxUnpool1d(2), nn.MaxUnpool2d(2),
        nn.MaxUnpool3d(2, 1, 1), nn.FractionalMaxPool2d(2, output_size=3),
        nn.FractionalMaxPool3d((2, 3, 2), output_ratio=0.5))
    assert repr(layers) == golden()["repr_layers"]


def test_padding_layers_print_as_pytorchs():
    pads = nn.Sequential(
        nn.ReflectionPad1d(2), nn.ReflectionPad1d((1, 2)),
        nn.ReflectionPad3d(1), nn.ReplicationPad1d(3),
        nn.ReplicationPad2d((1, 2, 3, 4)),
        nn.ReplicationPad3d((1, 2, 3, 4, 5, 6)), nn.ConstantPad1d(2, 3.5),
        nn.ConstantPad2d(1, 0.0), nn.ConstantPad3d(1, -1.25), nn.ZeroPad2d(1))
    assert repr(pads) == golden()["repr_pads"]
    x = ditto.randn(2, 3, 4, 5, 6)
    assert ditto.equal(nn.ReplicationPad3d((1, 2, 0, 1, 3, 0))(x),
                       F.pad(x, [1, 2, 0, 1, 3, 0], mode="replicate"))
    with pytest.raises(ValueError, match="ReflectionPad3d"):
        nn.ReflectionPad3d((1, 2))


def test_layers_compute_their_functional_op():
    ditto.manual_seed(0)
    x = ditto.randn(2, 3, 6, 8, 4)
    y, idx = nn.MaxPool3d(2, return_indices=True)(x)
    assert ditto.equal(y, F.max_pool3d(x, 2))
    back = nn.MaxUnpool3d(2)(y, idx)
    assert ditto.equal(F.max_pool3d(back, 2), y)
    assert list(nn.MaxUnpool3d(2)(y, idx, output_size=[7, 9, 5]).shape) == \
        [2, 3, 7, 9, 5]
    o, i = nn.AdaptiveMaxPool2d((3, 4), return_indices=True)(x[0])
    assert ditto.equal(o, F.adaptive_max_pool2d(x[0], (3, 4)))
    assert ditto.equal(
        nn.AvgPool3d(2, divisor_override=3)(x),
        F.avg_pool3d(x, 2, divisor_override=3))
    assert ditto.equal(nn.AdaptiveAvgPool1d(3)(x.flatten(2)),
                       ditto.adaptive_avg_pool1d(x.flatten(2), 3))
    assert ditto.equal(ditto.max_pool1d(x.flatten(2), 3),
                       F.max_pool1d(x.flatten(2), 3))


def test_bad_input_names_the_op():
    x = ditto.randn(1, 2, 4, 4, 4)
    with pytest.raises(ValueError, match=r"\[max_pool3d\].*pad should be"):
        F.max_pool3d(x, 2, 1, 2)
    with pytest.raises(ValueError, match=r"\[avg_pool1d\].*non-empty 2D or 3D"):
        F.avg_pool1d(x, 2)
    y, idx = F.max_pool3d(x, 2, return_indices=True)
    bad = idx.clone()
    bad.view(-1)[1] = 64
    with pytest.raises(IndexError, match=r"\[max_unpool3d\] Found an invalid "
                                         r"max index: 64"):
        F.max_unpool3d(y, bad, 2)
    with pytest.raises(ValueError, match=r"\[max_unpool2d\] invalid output_size"):
        F.max_unpool2d(y[0], idx[0], 2, output_size=[9, 2])


def test_interpolate_fixture_from_python():
    """F.interpolate with torch's keywords: the bits of PyTorch's AVX2
    kernels (tests/nn/interp_golden.json; antialiased sums within 1 ulp)."""
    with open(os.path.join(HERE, "..", "nn", "interp_golden.json")) as f:
        cases = json.load(f)["cases"]
    assert len(cases) >= 26
    for case in cases:
        x = f32(case["x"], case["sizes"]).requires_grad_(True)
        y = F.interpolate(x, **case["args"])
        assert list(y.shape) == case["out_sizes"], case["name"]
        y.backward(f32(case["grad_y"], case["out_sizes"]))
        for got, want in ((y, case["y"]), (x.grad, case["grad_x"])):
            if case["args"].get("antialias"):
                g = got.detach().reshape(-1).tolist()
                assert all(abs(a - b) <= max(1e-6, 1.2e-7 * abs(b))
                           for a, b in zip(g, want)), case["name"]
            else:
                assert bits(got) == want_bits(want), case["name"]
    # torch's class: NotImplementedError
    with pytest.raises(NotImplementedError,
                       match="Got 3D input, but bilinear mode needs 4D input"):
        F.interpolate(ditto.randn(1, 2, 5), size=3, mode="bilinear")


def test_fractional_layers_draw_at_each_forward():
    x = ditto.randn(2, 3, 9, 10)
    layer = nn.FractionalMaxPool2d(3, output_ratio=0.5, return_indices=True)
    assert repr(layer) == "FractionalMaxPool2d()"
    ditto.manual_seed(4)
    a, ia = layer(x)
    b, ib = layer(x)
    ditto.manual_seed(4)
    assert ditto.equal(a, F.fractional_max_pool2d(x, 3, output_ratio=0.5))
    assert ditto.equal(b, F.fractional_max_pool2d(x, 3, output_ratio=(0.5, 0.5)))
    u = ditto.rand(2, 3, 3)
    fixed = nn.FractionalMaxPool3d(2, output_size=(3, 4, 4), _random_samples=u)
    v = ditto.randn(2, 3, 5, 7, 8)
    assert ditto.equal(fixed(v), fixed(v))
    with pytest.raises(ValueError, match="output size, or a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="too large"):
        F.fractional_max_pool2d(x, 3, output_size=(8, 2))
