"""The ops added by declaration alone or with a one-line kernel (rsqrt,
reciprocal, floor, ceil, trunc, round, frac; fmod and copysign with their
Scalar overloads; docs/ops.md) give torch 1.13's bits, values and
gradients, in float32 and float64 (ties, signed zeros, infinities, values
already integral, broadcast values). NaN is compared as NaN: its
sign and payload are not reproducible across CPUs (docs/fingerprint.md).
The values come from gen_declared_golden.py."""
import json
import os

import numpy as np
import pytest

import ditto

with open(os.path.join(os.path.dirname(__file__), "declared_golden.json")) as f:
    GOLDEN = json.load(f)

INT = {"float32": np.int32, "float64": np.int64}


def values(b, dtype):
    return np.array(b, dtype=INT[dtype]).view(dtype)


def assert_same_bits(got, want, what):
    got = np.asarray(got)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), what
    g = got[~nan].view(INT[str(want.dtype)])
    w = want[~nan].view(INT[str(want.dtype)])
    bad = np.nonzero(g != w)[0]
    assert bad.size == 0, (
        f"{what}: {bad.size} differ, first at {bad[0]}: "
        f"{got[~nan][bad[0]]!r} against torch's {want[~nan][bad[0]]!r}")


UNARY = [c for c in GOLDEN["cases"] if "x" in c]
BINARY = [c for c in GOLDEN["cases"] if "a" in c]


@pytest.mark.parametrize(
    "case", UNARY, ids=[f"{c['op']}-{c['dtype']}-{c['label']}" for c in UNARY])
def test_values_and_gradients_are_torchs(case):
    dt = case["dtype"]
    x = ditto.tensor(values(case["x"], dt))
    op = case["op"]
    y = getattr(ditto, op)(x)
    assert_same_bits(y.numpy(), values(case["y"], dt), f"{op} {dt}")
    # The method and the in-place form give the function's bits.
    assert_same_bits(getattr(x, op)().numpy(), values(case["y"], dt), op)
    z = x.clone()
    getattr(z, op + "_")()
    assert_same_bits(z.numpy(), values(case["y"], dt), op + "_")
    if "dx" in case:
        xg = x.clone().requires_grad_(True)
        getattr(ditto, op)(xg).backward(ditto.tensor(values(case["g"], dt)))
        assert_same_bits(xg.grad.numpy(), values(case["dx"], dt),
                         f"d{op} {dt}")


def test_integer_inputs_follow_torch():
    # floor, ceil, trunc and round keep an integer tensor as it is; rsqrt
    # and reciprocal compute in float32.
    x = ditto.tensor([-3, 0, 7])
    for op in ("floor", "ceil", "trunc", "round"):
        y = getattr(ditto, op)(x)
        assert y.dtype == ditto.int64
        assert y.tolist() == [-3, 0, 7]
    r = ditto.reciprocal(x)
    assert r.dtype == ditto.float32
    assert r.tolist()[2] == np.float32(1) / np.float32(7)
    with pytest.raises(TypeError, match="floor"):
        ditto.floor(ditto.tensor([True, False]))


@pytest.mark.parametrize(
    "case", BINARY, ids=[f"{c['op']}-{c['dtype']}-{c['label']}" for c in BINARY])
def test_binary_values_and_gradients_are_torchs(case):
    dt, op = case["dtype"], case["op"]
    a = ditto.tensor(values(case["a"], dt))
    b = ditto.tensor(values(case["b"], dt))
    if case["label"] == "matrix":
        a = a.reshape(4, 6)
        b = b.reshape(4, 6)
        assert_same_bits(getattr(ditto, op)(a, b[0]).numpy().ravel(),
                         values(case["y_row"], dt), op + " broadcast")
    want = values(case["y"], dt)
    assert_same_bits(getattr(ditto, op)(a, b).numpy().ravel(), want, op)
    assert_same_bits(getattr(a, op)(b).numpy().ravel(), want, op)
    z = a.clone()
    getattr(z, op + "_")(b)
    assert_same_bits(z.numpy().ravel(), want, op + "_")
    if "y_scalar" in case:
        assert_same_bits(getattr(ditto, op)(a, -1.5).numpy(),
                         values(case["y_scalar"], dt), op + " scalar")
    if "da" in case:
        ag = a.clone().requires_grad_(True)
        bg = b.clone().requires_grad_(True)
        getattr(ditto, op)(ag, bg).backward(
            ditto.tensor(values(case["g"], dt)).reshape(4, 6))
        assert_same_bits(ag.grad.numpy().ravel(), values(case["da"], dt),
                         f"d{op}/da")
        assert_same_bits(bg.grad.numpy().ravel(), values(case["db"], dt),
                         f"d{op}/db")


def test_binary_integer_forms_are_torchs():
    g = GOLDEN["integer"]
    a, b = ditto.tensor(g["a"]), ditto.tensor(g["b"])
    y = ditto.fmod(a, b)
    assert y.dtype == ditto.int64 and y.tolist() == g["fmod"]
    assert ditto.fmod(a, 4).tolist() == g["fmod_scalar"]
    c = ditto.copysign(a, b)
    assert c.dtype == ditto.float32 and c.tolist() == g["copysign"]
    # An integer divisor of zero is refused, and nothing is written.
    z = a.clone()
    with pytest.raises(ValueError, match="fmod.*ZeroDivisionError"):
        ditto.fmod(a, ditto.tensor([1, 0, 1, 1, 1, 1]))
    with pytest.raises(ValueError, match="ZeroDivisionError"):
        z.fmod_(0)
    assert z.tolist() == g["a"]
    # Floating divisors of zero give NaN, as C's fmod.
    assert np.isnan(ditto.fmod(ditto.tensor([1.0]), 0.0).item())
