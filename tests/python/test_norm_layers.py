"""BatchNorm3d and InstanceNorm1d/2d/3d from Python against the PyTorch 1.13
fixture (tests/nn/norm_golden.json): training output and running
statistics bit for bit, gradients and eval output within 2e-6 (as the C++
tests/nn/norm_golden_test.cpp), and how the layers print."""
import json
import math
import os
import struct

import ditto
import ditto.nn as nn
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def f32(values, shape):
    return ditto.tensor(values, dtype=ditto.float64).float().reshape(shape)


def bits(t):
    return [struct.pack("<f", v)
            for v in t.detach().contiguous().reshape(-1).tolist()]


def want_bits(values):
    return [struct.pack("<f", v) for v in values]


def close(t, want, tol=2e-6):
    got = t.detach().reshape(-1).tolist()
    return len(got) == len(want) and all(
        abs(a - b) <= tol * max(1.0, abs(b)) for a, b in zip(got, want))


def test_norm_layers_match_the_fixture():
    with open(os.path.join(HERE, "..", "nn", "norm_golden.json")) as f:
        cases = json.load(f)["cases"]
    assert len(cases) == 8
    for c in cases:
        layer = getattr(nn, c["layer"])(c["num_features"], **c["args"])
        assert repr(layer) == c["repr"]
        if layer.weight is not None:
            with ditto.no_grad():
                layer.weight.copy_(f32(c["weight"], [c["num_features"]]))
                layer.bias.copy_(f32(c["bias"], [c["num_features"]]))
        x = f32(c["x"], c["sizes"]).requires_grad_(True)
        layer.train()
        y = layer(x)
        assert bits(y) == want_bits(c["y"]), c["repr"]
        y.backward(f32(c["grad_y"], c["sizes"]))
        assert close(x.grad, c["grad_x"]), c["repr"]
        if "running_mean" in c:
            assert bits(layer.running_mean) == want_bits(c["running_mean"])
            assert bits(layer.running_var) == want_bits(c["running_var"])
        layer.eval()
        assert close(layer(x), c["y_eval"]), c["repr"]
    # torch.instance_norm's ATen order: weight and bias, then the running
    # statistics, every argument given (as torch requires)
    assert ditto.equal(
        ditto.instance_norm(x.detach(), None, None, None, None, True, 0.1,
                            1e-5, False),
        nn.functional.instance_norm(x.detach()))


def test_order_statistics_return_pytorchs_tie_indices():
    """kthvalue, median, mode and topk from Python: torch's named tuples and
    the indices PyTorch 1.13 returns among ties
    (tests/ops/selection_golden.json, checked fully by the C++ test)."""
    x = ditto.tensor([3., 1, 2, 1, 3, 1, 2])
    assert ditto.kthvalue(x, 2).indices.item() == 1
    assert x.topk(3).indices.tolist() == [4, 0, 2]
    assert x.topk(3, largest=False).indices.tolist() == [1, 5, 3]
    assert ditto.median(x).item() == 2.0
    assert tuple(ditto.median(x, 0)) == (ditto.tensor(2.), ditto.tensor(2))
    assert x.mode().indices.item() == 5
    nan = ditto.tensor([1., float("nan"), 0.])
    assert ditto.median(nan, 0).indices.item() == 1
    assert ditto.nanmedian(nan, 0).indices.item() == 2


def test_scans_follow_torch():
    """cumsum, cumprod (and in place), logcumsumexp, cummax and cummin
    from Python: torch's dtypes, keywords and named tuples (bits checked
    against PyTorch 1.13 by tests/ops/scan_test.cpp)."""
    x = ditto.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    assert ditto.cumsum(x, 1).tolist() == [[1., 3., 6.], [4., 9., 15.]]
    assert x.cumprod(dim=0).tolist() == [[1., 2., 3.], [4., 10., 18.]]
    assert ditto.cumsum(x, 1, dtype=ditto.float64).dtype == ditto.float64
    x.cumsum(1).sum().backward()
    assert x.grad.tolist() == [[3., 2., 1.], [3., 2., 1.]]
    ints = ditto.tensor([1, 2, 3], dtype=ditto.int32)
    assert ditto.cumsum(ints, 0).dtype == ditto.int64
    ints.cumsum_(0)
    assert ints.tolist() == [1, 3, 6] and ints.dtype == ditto.int32
    with pytest.raises(TypeError):
        ints.cumsum_(0, dtype=ditto.float32)
    v, i = ditto.cummax(ditto.tensor([1., 3., 2., 3.]), 0)
    assert v.tolist() == [1., 3., 3., 3.] and i.tolist() == [0, 1, 1, 3]
    assert ditto.tensor([2, 1, 1]).cummin(0).indices.tolist() == [0, 1, 2]
    lse = ditto.tensor([0., 0.]).logcumsumexp(0)
    assert abs(lse[1].item() - math.log(2)) < 1e-6
    with pytest.raises(IndexError):
        ditto.cumsum(x, 2)


def test_repeat_interleave_follows_torch():
    """torch.repeat_interleave's three forms and keywords from Python."""
    x = ditto.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    assert ditto.repeat_interleave(x, 2).tolist() == [1., 1., 2., 2., 3., 3.,
                                                       4., 4.]
    y = x.repeat_interleave(ditto.tensor([1, 2]), dim=0)
    assert y.tolist() == [[1., 2.], [3., 4.], [3., 4.]]
    y.sum().backward()
    assert x.grad.tolist() == [[1., 1.], [2., 2.]]
    assert ditto.repeat_interleave(ditto.tensor([2, 1])).tolist() == [0, 0, 1]
    assert x.repeat_interleave(3, dim=1, output_size=6).shape == (2, 6)
    with pytest.raises(ValueError):
        x.repeat_interleave(2, dim=1, output_size=5)


def test_quantile_and_lerp_follow_torch():
    """quantile, nanquantile (q a number or a tensor, every interpolation)
    and lerp from Python (bits against PyTorch 1.13:
    tests/ops/selection_test.cpp)."""
    x = ditto.tensor([[1., 4., 2., 3.], [8., 5., 6., 7.]])
    assert ditto.quantile(x, 0.5, dim=1).tolist() == [2.5, 6.5]
    q = ditto.tensor([0.0, 1.0])
    assert x.quantile(q, dim=1, keepdim=True).shape == (2, 2, 1)
    assert ditto.quantile(x, 0.4, interpolation="lower").item() == 3.0
    nan = ditto.tensor([1., float("nan"), 3.])
    assert math.isnan(ditto.quantile(nan, 0.5).item())
    assert ditto.nanquantile(nan, 0.5).item() == 2.0
    with pytest.raises(ValueError):
        ditto.quantile(x, 1.5)
    a, b = ditto.tensor([0., 10.]), ditto.tensor([10., 20.])
    assert ditto.lerp(a, b, 0.25).tolist() == [2.5, 12.5]
    assert a.lerp(b, ditto.tensor([0.5, 1.0])).tolist() == [5.0, 20.0]
